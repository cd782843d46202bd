import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const chatbotResource: ResourceDeclaration = { kind: 'chatbot', id: 'chatbotId' };

const chatbotState = {
  projectId: z.number().int(),
  /** The project's name: projects are never renamed, so readers need no lookup. */
  project: z.string(),
  name: z.string(),
  agentId: z.number().int().nullable(),
  modelName: z.string().nullable(),
  /** The chat database (an integration); its name is kept so the log reads on its own. */
  databaseId: z.number().int().nullable(),
  databaseName: z.string().nullable(),
  params: freeFormObject(),
  isRunning: z.boolean(),
  webhookToken: z.string().nullable(),
};

export const ChatbotCreated = defineEvent(
  'ChatbotCreated',
  z.object({ ...chatbotState, createdAt: z.iso.datetime() }),
  { resource: chatbotResource },
);
export const ChatbotUpdated = defineEvent(
  'ChatbotUpdated',
  z.object({ ...chatbotState, chatbotId: z.number().int(), updatedAt: z.iso.datetime() }),
  { resource: chatbotResource },
);
export const ChatbotDeleted = defineEvent(
  'ChatbotDeleted',
  z.object({
    projectId: z.number().int(),
    chatbotId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: chatbotResource },
);
/** A consequence of deleting the chatbot's agent: it loses the agent and stops, and says why. */
export const ChatbotStoppedAgentDeleted = defineEvent(
  'ChatbotStoppedAgentDeleted',
  z.object({
    projectId: z.number().int(),
    chatbotId: z.number().int(),
    agentId: z.number().int(),
    agentName: z.string(),
    lastError: z.string(),
    stoppedAt: z.iso.datetime(),
  }),
  { resource: chatbotResource },
);

export type ChatbotCreated = EventOf<typeof ChatbotCreated>;
export type ChatbotUpdated = EventOf<typeof ChatbotUpdated>;
export type ChatbotDeleted = EventOf<typeof ChatbotDeleted>;
export type ChatbotStoppedAgentDeleted = EventOf<typeof ChatbotStoppedAgentDeleted>;
export type ChatbotEvent = ChatbotCreated | ChatbotUpdated | ChatbotDeleted | ChatbotStoppedAgentDeleted;
export const chatbotContracts = [
  ChatbotCreated,
  ChatbotUpdated,
  ChatbotDeleted,
  ChatbotStoppedAgentDeleted,
] as const;
