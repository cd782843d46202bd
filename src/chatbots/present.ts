import { toMindsDbTimestamp } from '../shared/time';
import type { ChatbotRow } from './projection';

const num = (v: bigint | null) => (v === null ? null : Number(v));

/** MindsDB's rich chatbot (GET and lists): the agent whole, the database by name ("?" once it is gone). */
export const presentChatbot = (row: ChatbotRow, agent: Record<string, unknown> | null) => ({
  id: Number(row.ID),
  name: row.NAME,
  project: row.PROJECT,
  agent,
  database_id: num(row.DATABASE_ID),
  database: row.DATABASE ?? '?',
  model_name: row.MODEL_NAME,
  params: JSON.parse(row.PARAMS) as Record<string, unknown>,
  created_at: toMindsDbTimestamp(row.CREATED_AT),
  updated_at: toMindsDbTimestamp(row.UPDATED_AT),
  is_running: row.IS_RUNNING,
  last_error: row.LAST_ERROR,
  webhook_token: row.WEBHOOK_TOKEN,
});

/** MindsDB's flat chatbot (`ChatBots.as_dict`), the answer to POST and PUT. */
export const presentChatbotFlat = (row: ChatbotRow) => ({
  id: Number(row.ID),
  name: row.NAME,
  project_id: Number(row.PROJECT_ID),
  agent_id: num(row.AGENT_ID),
  model_name: row.MODEL_NAME,
  params: JSON.parse(row.PARAMS) as Record<string, unknown>,
  webhook_token: row.WEBHOOK_TOKEN,
  created_at: toMindsDbTimestamp(row.CREATED_AT),
  database_id: num(row.DATABASE_ID),
});
