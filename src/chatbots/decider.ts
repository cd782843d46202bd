import type {
  AnyRecordedEvent,
  ChatbotCreated,
  ChatbotDeleted,
  ChatbotEvent,
  ChatbotStoppedAgentDeleted,
  ChatbotUpdated,
} from '../../events';
import { requireAgent } from '../agents/decider';
import type { ProjectAggregate } from '../projects/aggregate';
import { projectHasModel } from '../projects/aggregate';
import { requireLiveProject } from '../projects/decider';
import { checkExpectedVersion, conflict, invalid, notFound } from '../shared/errors';
import { findByName, mergeParams, type Params } from '../shared/params';

export type Chatbot = {
  readonly id: bigint;
  readonly name: string;
  readonly agentId: bigint | null;
  readonly modelName: string | null;
  readonly databaseId: bigint | null;
  readonly databaseName: string | null;
  readonly params: Params;
  readonly isRunning: boolean;
  readonly lastError: string | null;
  readonly webhookToken: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: bigint;
};
export type ChatbotsState = ReadonlyMap<bigint, Chatbot>;

/** The chat database, resolved by the service (integrations live in their own streams). */
export type ChatDatabase = { id: bigint; name: string };

type Now = { now: Date };
export type ChatbotCommand =
  | {
      type: 'CreateChatbot';
      data: {
        name: string;
        agentRef: string | null;
        modelName: string | null;
        database: ChatDatabase;
        isRunning: boolean;
        params: Params;
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
      };
      metadata: Now;
    }
  | { type: 'DeleteChatbot'; data: { ref: string; expectedVersion?: bigint }; metadata: Now };

const stateOf = (d: ChatbotCreated['data'] | ChatbotUpdated['data']) => ({
  name: d.name,
  agentId: d.agentId === null ? null : BigInt(d.agentId),
  modelName: d.modelName,
  databaseId: d.databaseId === null ? null : BigInt(d.databaseId),
  databaseName: d.databaseName,
  params: d.params,
  isRunning: d.isRunning,
  webhookToken: d.webhookToken,
});

export const evolveChatbots = (bots: ChatbotsState, event: AnyRecordedEvent): ChatbotsState => {
  switch (event.type) {
    case 'ChatbotCreated': {
      const d = (event as unknown as ChatbotCreated).data;
      const id = event.meta.position;
      return new Map(bots).set(id, {
        id,
        ...stateOf(d),
        lastError: null,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        version: id,
      });
    }
    case 'ChatbotUpdated': {
      const d = (event as unknown as ChatbotUpdated).data;
      const current = bots.get(BigInt(d.chatbotId));
      if (!current) return bots;
      // Starting a bot again clears the error that stopped it.
      const lastError = d.isRunning && !current.isRunning ? null : current.lastError;
      return new Map(bots).set(current.id, {
        ...current,
        ...stateOf(d),
        lastError,
        updatedAt: d.updatedAt,
        version: event.meta.position,
      });
    }
    case 'ChatbotStoppedAgentDeleted': {
      const d = (event as unknown as ChatbotStoppedAgentDeleted).data;
      const current = bots.get(BigInt(d.chatbotId));
      if (!current) return bots;
      return new Map(bots).set(current.id, {
        ...current,
        agentId: null,
        isRunning: false,
        lastError: d.lastError,
        updatedAt: d.stoppedAt,
        version: event.meta.position,
      });
    }
    case 'ChatbotDeleted': {
      const next = new Map(bots);
      next.delete(BigInt((event as unknown as ChatbotDeleted).data.chatbotId));
      return next;
    }
    default:
      return bots;
  }
};

/** A chatbot reference: its id, or its name matched exactly (MindsDB's chatbot names are case-sensitive). */
export const isChatbotRef = (ref: string, id: bigint, name: string) =>
  name === ref || (/^\d+$/.test(ref) && id === BigInt(ref));

const findChatbot = (state: ProjectAggregate, ref: string) =>
  [...state.chatbots.values()].find((b) => isChatbotRef(ref, b.id, b.name));

export const requireChatbot = (state: ProjectAggregate, ref: string): Chatbot => {
  const bot = findChatbot(state, ref);
  if (!bot) throw notFound(`Chatbot with name ${ref} does not exist`, 'Chatbot not found');
  return bot;
};

/** A chatbot answers through an agent or directly through a model of its project. */
const resolveBrain = (state: ProjectAggregate, agentRef: string | null, modelName: string | null) => {
  if (!agentRef && !modelName)
    throw invalid('Must include either "model_name" or "agent_name" field for chatbot', 'Missing field');
  const agent = agentRef ? requireAgent(state, agentRef) : null;
  if (!agent && modelName && !projectHasModel(state, modelName))
    throw notFound(`Model with name ${modelName} does not exist in this project`, 'Model not found');
  return {
    agentId: agent ? Number(agent.id) : null,
    modelName: agent ? (agent.modelName ?? modelName) : modelName,
  };
};

const checkUnique = (state: ProjectAggregate, name: string, self?: bigint) => {
  const clash = findByName(state.chatbots.values(), name);
  if (clash && clash.id !== self)
    throw conflict(
      `Chatbot with name ${name} already exists. Please choose a different one.`,
      'Chatbot already exists',
    );
};

export const removeChatbot = (state: ProjectAggregate, bot: Chatbot, now: Date): ChatbotDeleted => ({
  type: 'ChatbotDeleted',
  data: {
    projectId: Number(requireLiveProject(state.project).id),
    chatbotId: Number(bot.id),
    name: bot.name,
    deletedAt: now.toISOString(),
  },
});

export const decideChatbot = (command: ChatbotCommand, state: ProjectAggregate): ChatbotEvent[] => {
  const project = requireLiveProject(state.project);
  const at = command.metadata.now.toISOString();
  const create = (d: Extract<ChatbotCommand, { type: 'CreateChatbot' }>['data']): ChatbotCreated => {
    checkUnique(state, d.name);
    const brain = resolveBrain(state, d.agentRef, d.modelName);
    return {
      type: 'ChatbotCreated',
      data: {
        projectId: Number(project.id),
        project: project.name,
        name: d.name,
        ...brain,
        databaseId: Number(d.database.id),
        databaseName: d.database.name,
        params: d.params,
        isRunning: d.isRunning,
        webhookToken: null,
        createdAt: at,
      },
    };
  };
  switch (command.type) {
    case 'CreateChatbot':
      return [create(command.data)];
    case 'PutChatbot': {
      const d = command.data;
      const current = findChatbot(state, d.ref);
      if (!current) {
        if (!d.database)
          throw invalid('Missing "database_id" or "database_name" field for chatbot', 'Missing field');
        return [
          create({
            // The body's name if given, else the URL's (MindsDB demands a body name here).
            name: d.name ?? d.ref,
            agentRef: d.agentRef ?? null,
            modelName: d.modelName ?? null,
            database: d.database,
            isRunning: d.isRunning ?? false,
            params: d.params ?? {},
          }),
        ];
      }
      checkExpectedVersion('Chatbot', current, d.expectedVersion);
      const name = d.name ?? current.name;
      checkUnique(state, name, current.id);
      const agentRef =
        d.agentRef === undefined ? (current.agentId === null ? null : String(current.agentId)) : d.agentRef;
      const modelName = d.modelName === undefined ? current.modelName : d.modelName;
      const brain =
        d.agentRef === undefined && d.modelName === undefined
          ? {
              agentId: current.agentId === null ? null : Number(current.agentId),
              modelName: current.modelName,
            }
          : resolveBrain(state, agentRef, modelName);
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
            webhookToken: current.webhookToken,
            updatedAt: at,
          },
        },
      ];
    }
    case 'DeleteChatbot': {
      const bot = requireChatbot(state, command.data.ref);
      checkExpectedVersion('Chatbot', bot, command.data.expectedVersion);
      return [removeChatbot(state, bot, command.metadata.now)];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
