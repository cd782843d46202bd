import type { ChatbotCreated, ChatbotDeleted, ChatbotUpdated } from '../../events';
import { requireAgent } from '../agents/state';
import { findModel } from '../models/state';
import type { ProjectAggregate } from '../shared/projectState';
import { checkExpectedVersion, invalid, notFound } from '../shared/errors';
import { requireFreeName } from '../shared/freeName';
import { decideInProject, type InProject, type Now, type ProjectRule } from '../shared/decision';
import { mergeParams, type Params } from '../shared/params';
import { chatbotDeleted, findChatbot, requireChatbot, type Chatbot } from './state';

/** What chatbot commands are decided on: the project, its chatbots and what they answer with. */
type ChatbotDecisionState = Pick<ProjectAggregate, 'project' | 'chatbots' | 'agents' | 'models'>;

/**
 * The chat database, resolved by the service (integrations live in their own streams). A chatbot
 * without one answers on the built-in channel only (`POST …/chatbots/{c}/messages`).
 */
export type ChatDatabase = { id: bigint; name: string };

export type ChatbotCommand =
  | {
      type: 'CreateChatbot';
      data: {
        name: string;
        agentRef: string | null;
        modelName: string | null;
        /** null: no chat database, the built-in channel only. */
        database: ChatDatabase | null;
        isRunning: boolean;
        params: Params;
        /** Made by the service (random): the chatbot's incoming webhook URL `/api/webhooks/chatbots/<token>`. */
        webhookToken: string;
      };
      metadata: Now;
    }
  | {
      /** PUT: update when present (params merged, new values winning), else create. */
      type: 'PutChatbot';
      data: {
        ref: string;
        name?: string;
        agentRef?: string | null;
        modelName?: string | null;
        database?: ChatDatabase;
        isRunning?: boolean;
        params?: Params;
        expectedVersion?: bigint;
        /** For a chatbot this PUT creates, or one made before chatbots had webhook tokens. */
        webhookToken: string;
      };
      metadata: Now;
    }
  | { type: 'DeleteChatbot'; data: { ref: string; expectedVersion?: bigint }; metadata: Now };

/** A chatbot answers through an agent or directly through a model of its project. */
const resolveBrain = (state: ChatbotDecisionState, agentRef: string | null, modelName: string | null) => {
  if (!agentRef && !modelName)
    throw invalid('Must include either "model_name" or "agent_name" field for chatbot', 'Missing field');
  const agent = agentRef ? requireAgent(state.agents, agentRef) : null;
  if (!agent && modelName && !findModel(state.models, modelName))
    throw notFound(`Model with name ${modelName} does not exist in this project`, 'Model not found');
  return {
    agentId: agent ? Number(agent.id) : null,
    modelName: agent ? (agent.modelName ?? modelName) : modelName,
  };
};

type ChatbotEvent = ChatbotCreated | ChatbotUpdated | ChatbotDeleted;
type Command<T extends ChatbotCommand['type']> = Extract<ChatbotCommand, { type: T }>;
type Decide<T extends ChatbotCommand['type']> = ProjectRule<
  ChatbotCommand,
  T,
  ChatbotDecisionState,
  ChatbotEvent
>;

const created = (
  state: ChatbotDecisionState,
  d: Command<'CreateChatbot'>['data'],
  { project, at }: InProject,
): ChatbotCreated => {
  requireFreeName('Chatbot', state.chatbots.values(), d.name);
  const brain = resolveBrain(state, d.agentRef, d.modelName);
  return {
    type: 'ChatbotCreated',
    data: {
      projectId: Number(project.id),
      project: project.name,
      name: d.name,
      ...brain,
      databaseId: d.database ? Number(d.database.id) : null,
      databaseName: d.database ? d.database.name : null,
      params: d.params,
      isRunning: d.isRunning,
      webhookToken: d.webhookToken,
      createdAt: at,
    },
  };
};

const createChatbot: Decide<'CreateChatbot'> = (command, state, inProject) => [
  created(state, command.data, inProject),
];

/** PUT of a chatbot that does not exist creates it, with the body's fields and MindsDB's defaults. */
const createByPut = (
  command: Command<'PutChatbot'>,
  state: ChatbotDecisionState,
  inProject: InProject,
): ChatbotCreated[] => {
  const d = command.data;
  return [
    created(
      state,
      {
        // The body's name if given, else the URL's (MindsDB demands a body name here).
        name: d.name ?? d.ref,
        agentRef: d.agentRef ?? null,
        modelName: d.modelName ?? null,
        database: d.database ?? null,
        isRunning: d.isRunning ?? false,
        params: d.params ?? {},
        webhookToken: d.webhookToken,
      },
      inProject,
    ),
  ];
};

/** The agent or model a chatbot answers with after an update: resolved again only when one is named. */
const updatedBrain = (state: ChatbotDecisionState, current: Chatbot, d: Command<'PutChatbot'>['data']) => {
  if (d.agentRef === undefined && d.modelName === undefined)
    return {
      agentId: current.agentId === null ? null : Number(current.agentId),
      modelName: current.modelName,
    };
  const agentRef =
    d.agentRef === undefined ? (current.agentId === null ? null : String(current.agentId)) : d.agentRef;
  const modelName = d.modelName === undefined ? current.modelName : d.modelName;
  return resolveBrain(state, agentRef, modelName);
};

const putChatbot: Decide<'PutChatbot'> = (command, state, { project, at }) => {
  const d = command.data;
  const current = findChatbot(state.chatbots, d.ref);
  if (!current) return createByPut(command, state, { project, at });
  checkExpectedVersion('Chatbot', current, d.expectedVersion);
  const name = d.name ?? current.name;
  requireFreeName('Chatbot', state.chatbots.values(), name, current.id);
  const brain = updatedBrain(state, current, d);
  return [
    {
      type: 'ChatbotUpdated',
      data: {
        projectId: Number(project.id),
        project: project.name,
        chatbotId: Number(current.id),
        name,
        ...brain,
        databaseId: d.database
          ? Number(d.database.id)
          : current.databaseId === null
            ? null
            : Number(current.databaseId),
        databaseName: d.database ? d.database.name : current.databaseName,
        // New values win (MindsDB merges the other way round, so its PUT cannot change a param).
        params: d.params ? mergeParams(current.params, d.params) : current.params,
        isRunning: d.isRunning ?? current.isRunning,
        webhookToken: current.webhookToken ?? d.webhookToken,
        updatedAt: at,
      },
    },
  ];
};

const deleteChatbot: Decide<'DeleteChatbot'> = (command, state, { project, at }) => {
  const bot = requireChatbot(state.chatbots, command.data.ref);
  checkExpectedVersion('Chatbot', bot, command.data.expectedVersion);
  return [chatbotDeleted(bot, project, at)];
};

export const decideChatbot = decideInProject<ChatbotCommand, ChatbotDecisionState, ChatbotEvent>({
  CreateChatbot: createChatbot,
  PutChatbot: putChatbot,
  DeleteChatbot: deleteChatbot,
});
