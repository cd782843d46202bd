import type { ChatbotCreated, ChatbotDeleted, ChatbotUpdated, RecordedEvent } from '../../events';
import { defineProjectSlice } from '../shared/projectState';
import { notFound } from '../shared/errors';
import type { Params } from '../shared/params';

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

const evolveChatbots = (bots: ChatbotsState, event: RecordedEvent): ChatbotsState => {
  switch (event.type) {
    case 'ChatbotCreated': {
      const d = event.data;
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
      const d = event.data;
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
      const d = event.data;
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
      next.delete(BigInt(event.data.chatbotId));
      return next;
    }
    default:
      return bots;
  }
};

/** A chatbot reference: its id, or its name matched exactly (MindsDB's chatbot names are case-sensitive). */
const isChatbotRef = (ref: string, id: bigint, name: string) =>
  name === ref || (/^\d+$/.test(ref) && id === BigInt(ref));

export const findChatbot = (bots: ChatbotsState, ref: string) =>
  [...bots.values()].find((b) => isChatbotRef(ref, b.id, b.name));

export const requireChatbot = (bots: ChatbotsState, ref: string): Chatbot => {
  const bot = findChatbot(bots, ref);
  if (!bot) throw notFound(`Chatbot with name ${ref} does not exist`, 'Chatbot not found');
  return bot;
};

export const chatbotsSlice = defineProjectSlice({
  key: 'chatbots',
  initial: (): ChatbotsState => new Map(),
  evolve: evolveChatbots,
  cascade: (bots, project, at) =>
    [...bots.values()].map((b): ChatbotDeleted => ({
      type: 'ChatbotDeleted',
      data: { projectId: Number(project.id), chatbotId: Number(b.id), name: b.name, deletedAt: at },
    })),
});
