import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { resourceRun, type ResourceWriteOptions } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { writtenResource } from '../shared/writtenResource';
import { decideChatbot, type ChatbotCommand, type ChatDatabase } from './decider';
import { presentChatbot, presentChatbotFlat } from './present';
import {
  chatbotRowById,
  chatbotRowByWebhookToken,
  chatbotRowByRef,
  chatbotRowsOfProject,
  runningChatbotRows,
  type ChatbotRow,
} from './projection';

/** A chatbot command as routes and SQL send it: the service adds what only it makes (webhook tokens). */
type ChatbotRequest =
  Unstamped<ChatbotCommand> extends infer C
    ? C extends { type: 'CreateChatbot' | 'PutChatbot'; data: infer D }
      ? Omit<C, 'data'> & { data: Omit<D, 'webhookToken'> }
      : C
    : never;

/** What a chatbot needs of the rest: its agent as MindsDB shows it, and its chat database. */
export type ChatbotPorts = {
  agentView(projectName: string, agentId: number): Promise<Record<string, unknown> | null>;
  requireIntegration(ref: { id?: number; name?: string }): Promise<ChatDatabase>;
};

export const chatbotsService = (ctx: AppContext, projects: ProjectDirectory, ports: ChatbotPorts) => {
  const rowsOf = (projectName: string) =>
    ctx.cached(`chatbots:${projectName.toLowerCase()}`, async () => {
      const project = await projects.require(projectName);
      return chatbotRowsOfProject(ctx.duck, project.id);
    });

  const rich = async (row: ChatbotRow) =>
    presentChatbot(
      row,
      row.AGENT_ID === null ? null : await ports.agentView(row.PROJECT, Number(row.AGENT_ID)),
    );

  const findRow = async (projectName: string, ref: string) => {
    const project = await projects.require(projectName);
    const row = await chatbotRowByRef(ctx.duck, project.id, ref);
    if (!row) throw notFound(`Chatbot with name ${ref} does not exist`, 'Chatbot not found');
    return row;
  };

  /** The chat database named by id or name; `db_engine`/`db_params` (make one on the fly) is not offered. */
  const resolveDatabase = async (body: {
    database_id?: number;
    database_name?: string;
    db_engine?: string;
  }): Promise<ChatDatabase | undefined> => {
    if (body.db_engine !== undefined)
      throw invalid(
        'Creating a chat database from "db_engine"/"db_params" is not supported: register it with POST /api/databases and pass "database_name"',
        'Unsupported field',
      );
    if (body.database_id === undefined && body.database_name === undefined) return undefined;
    return ports.requireIntegration({ id: body.database_id, name: body.database_name });
  };

  const write = resourceRun<Unstamped<ChatbotCommand>>(ctx, projects, {
    decide: decideChatbot,
    answer: 'settled',
    deletedBy: 'ChatbotDeleted',
  });
  /** `forget`: a delete forgets the chatbot's secrets too, under every name it had (crypto-shredding). */
  const run = async (projectName: string, unstamped: ChatbotRequest, options: ResourceWriteOptions = {}) => {
    // A new chatbot's webhook token is random: made here, so the decider stays pure.
    const data =
      unstamped.type === 'DeleteChatbot'
        ? unstamped.data
        : { ...unstamped.data, webhookToken: crypto.randomBytes(24).toString('base64url') };
    const outcome = await write(projectName, { ...unstamped, data } as Unstamped<ChatbotCommand>, options);
    const made = writtenResource(
      outcome.events,
      ['ChatbotCreated', 'ChatbotUpdated'],
      (e) => e.data.chatbotId,
    );
    return made && { created: made.created, row: await findRow(outcome.project, String(made.id)) };
  };

  return {
    list: async (projectName: string) => Promise.all((await rowsOf(projectName)).map(rich)),
    get: async (projectName: string, ref: string) => {
      const row = await findRow(projectName, ref);
      return { view: await rich(row), version: row.VERSION };
    },
    flat: presentChatbotFlat,
    /** For conversations: chatbots by id, by webhook token, and those running (read model rows). */
    rows: {
      require: findRow,
      byId: (id: bigint) => ctx.cached(`chatbot-id:${id}`, () => chatbotRowById(ctx.duck, id)),
      byWebhookToken: (token: string) => chatbotRowByWebhookToken(ctx.duck, token),
      running: () => ctx.cached('chatbots:running', () => runningChatbotRows(ctx.duck)),
    },
    resolveDatabase,
    run,
  };
};

export type ChatbotsService = ReturnType<typeof chatbotsService>;
