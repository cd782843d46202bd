import { z } from 'zod';
import { looseName, params } from '../shared/resourceSchemas';

export const chatbotsPath = z.object({ project: z.string().min(1) });
export const chatbotPath = z.object({ project: z.string().min(1), chatbot: z.string().min(1) });

const chatbotFields = {
  agent_name: z.string().min(1).nullable().optional(),
  model_name: z.string().min(1).nullable().optional(),
  database_id: z.number().int().optional(),
  database_name: z.string().min(1).optional(),
  is_running: z.boolean().optional(),
  params: params.optional(),
  db_engine: z.string().optional(),
  db_params: params.optional(),
};

export const createChatbotBody = z.object({
  chatbot: z.object(
    { name: looseName('chatbot'), ...chatbotFields },
    { error: 'Must provide "chatbot" parameter in POST body' },
  ),
});

export const putChatbotBody = z.object({
  chatbot: z.object(
    { name: looseName('chatbot').optional(), ...chatbotFields },
    { error: 'Must provide "chatbot" parameter in PUT body' },
  ),
});

/** What POST and PUT answer (MindsDB's `ChatBots.as_dict`). */
export const chatbotFlatView = z.object({
  id: z.number().int(),
  name: z.string(),
  project_id: z.number().int(),
  agent_id: z.number().int().nullable(),
  model_name: z.string().nullable(),
  params,
  webhook_token: z.string().nullable(),
  created_at: z.string(),
  database_id: z.number().int().nullable(),
});

/** What GET answers (MindsDB's richer controller shape). */
export const chatbotView = z.object({
  id: z.number().int(),
  name: z.string(),
  project: z.string(),
  agent: z.record(z.string(), z.unknown()).nullable(),
  database_id: z.number().int().nullable(),
  database: z
    .string()
    .describe(
      '"?" when the chatbot has no chat database (none was named, or it no longer exists): it answers on the built-in channel only',
    ),
  model_name: z.string().nullable(),
  params,
  created_at: z.string(),
  updated_at: z.string(),
  is_running: z.boolean(),
  last_error: z.string().nullable(),
  webhook_token: z.string().nullable(),
});
