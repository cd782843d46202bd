import type { ChatbotInfo } from './service';

/** A chatbot's read-model row as conversations see it (the chatbots table's columns they use). */
export type ChatbotRowLike = {
  ID: bigint;
  PROJECT_ID: bigint;
  PROJECT: string;
  NAME: string;
  AGENT: string | null;
  MODEL_NAME: string | null;
  IS_RUNNING: boolean;
  DATABASE: string | null;
  DATABASE_ID: bigint | null;
  WEBHOOK_TOKEN: string | null;
};

export const chatbotInfoOf = (row: ChatbotRowLike, engine: string | null): ChatbotInfo => ({
  id: row.ID,
  projectId: row.PROJECT_ID,
  project: row.PROJECT,
  name: row.NAME,
  agent: row.AGENT,
  modelName: row.MODEL_NAME,
  isRunning: row.IS_RUNNING,
  database: row.DATABASE,
  databaseId: row.DATABASE_ID,
  engine,
  webhookToken: row.WEBHOOK_TOKEN,
});
