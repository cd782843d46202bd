import type { ChatbotCreated, ChatbotDeleted, ChatbotUpdated, RecordedEvent } from '../../events';
import type { Params } from '../shared/params';
import {
  changeResource,
  defineResourcesSlice,
  firstVersion,
  nextVersion,
  orNotFound,
  withoutResource,
  withResource,
  type Versioned,
} from '../shared/resourceState';
import type { ProjectRef } from '../shared/projectState';

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
} & Versioned;
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
    case 'ChatbotCreated':
      return withResource(
        bots,
        firstVersion(event, event.data.createdAt, { ...stateOf(event.data), lastError: null }),
      );
    case 'ChatbotUpdated': {
      const d = event.data;
      return changeResource(bots, d.chatbotId, (current) =>
        nextVersion(current, event, d.updatedAt, {
          ...stateOf(d),
          // Starting a bot again clears the error that stopped it.
          lastError: d.isRunning && !current.isRunning ? null : current.lastError,
        }),
      );
    }
    case 'ChatbotStoppedAgentDeleted': {
      const d = event.data;
      return changeResource(bots, d.chatbotId, (current) =>
        nextVersion(current, event, d.stoppedAt, { agentId: null, isRunning: false, lastError: d.lastError }),
      );
    }
    case 'ChatbotDeleted':
      return withoutResource(bots, event.data.chatbotId);
    default:
      return bots;
  }
};

/** A chatbot reference: its id, or its name matched exactly (MindsDB's chatbot names are case-sensitive). */
const isChatbotRef = (ref: string, id: bigint, name: string) =>
  name === ref || (/^\d+$/.test(ref) && id === BigInt(ref));

export const findChatbot = (bots: ChatbotsState, ref: string) =>
  [...bots.values()].find((b) => isChatbotRef(ref, b.id, b.name));

export const requireChatbot = (bots: ChatbotsState, ref: string): Chatbot =>
  orNotFound(findChatbot(bots, ref), 'Chatbot', ref);

/** The event deleting `bot`: its DELETE's and its project's deletion's. */
export const chatbotDeleted = (bot: Chatbot, project: ProjectRef, at: string): ChatbotDeleted => ({
  type: 'ChatbotDeleted',
  data: { projectId: Number(project.id), chatbotId: Number(bot.id), name: bot.name, deletedAt: at },
});

export const chatbotsSlice = defineResourcesSlice('chatbots', evolveChatbots, chatbotDeleted);
