import type { ChatbotPorts, ChatbotsService } from './service';
import {
  createByName,
  dropByName,
  optionText,
  ownProject,
  updateByName,
  type SqlCatalog,
  type StatementHandlers,
} from '../sql/handlers';

type ChatbotSqlPorts = {
  readonly chatbots: Pick<ChatbotsService, 'get' | 'run'>;
  readonly requireIntegration: ChatbotPorts['requireIntegration'];
};

/** CREATE CHATBOT, UPDATE / ALTER CHATBOT and DROP CHATBOT [FORGET], through the chatbots service. */
export const chatbotStatements = ({ chatbots, requireIntegration }: ChatbotSqlPorts) =>
  ({
    CreateChatbot: createByName(chatbots.get, async (project, name, options) => {
      const { database, agent, model, is_running, ...params } = options;
      // Without a database the chatbot answers on the built-in channel only.
      const dbName = optionText('database', database);
      await chatbots.run(project, {
        type: 'CreateChatbot',
        data: {
          name,
          agentRef: optionText('agent', agent) ?? null,
          modelName: optionText('model', model) ?? null,
          database: dbName ? await requireIntegration({ name: dbName }) : null,
          // SQL's default, as MindsDB (REST's is false).
          isRunning: is_running === undefined ? true : Boolean(is_running),
          params,
        },
      });
    }),
    UpdateChatbot: updateByName(chatbots.get, async (project, name, options) => {
      const { database, agent, model, is_running, name: rename, ...params } = options;
      const dbName = optionText('database', database);
      await chatbots.run(project, {
        type: 'PutChatbot',
        data: {
          ref: name,
          name: optionText('name', rename),
          agentRef: agent === undefined ? undefined : (optionText('agent', agent) ?? null),
          modelName: model === undefined ? undefined : (optionText('model', model) ?? null),
          database: dbName ? await requireIntegration({ name: dbName }) : undefined,
          isRunning: is_running === undefined ? undefined : Boolean(is_running),
          params: Object.keys(params).length ? params : undefined,
        },
      });
    }),
    DropChatbot: dropByName((project, ref, _ifExists, options) =>
      chatbots.run(project, { type: 'DeleteChatbot', data: { ref } }, options),
    ),
  }) satisfies StatementHandlers<'CreateChatbot' | 'UpdateChatbot' | 'DropChatbot'>;

/** information_schema.CHATBOTS, and every project's chatbots table. */
export const chatbotCatalog = {
  informationSchema: {
    CHATBOTS: `SELECT NAME, PROJECT, DATABASE, AGENT, MODEL_NAME, CAST(PARAMS AS VARCHAR) AS PARAMS, IS_RUNNING, LAST_ERROR, WEBHOOK_TOKEN FROM main.chatbots ORDER BY ID`,
  },
  projectTables: { chatbots: 'CHATBOTS' },
  scopedRows: { chatbots: ownProject },
  // Each chatbot's conversations and channels (chat-<id>-…, chatchannel-<id>-…).
  projectStreams: (ofProject) => `EXISTS (SELECT 1 FROM main.chatbots c WHERE ${ofProject}
      AND (starts_with(stream, 'chat-' || c.ID || '-') OR starts_with(stream, 'chatchannel-' || c.ID || '-')))`,
} satisfies SqlCatalog;
