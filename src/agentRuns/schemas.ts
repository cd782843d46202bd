import { z } from 'zod';

export const agentParams = z.object({ project: z.string().min(1), agent: z.string().min(1) });
export const runParams = agentParams.extend({ trace_id: z.string().min(1) });

export const completionBody = z.object({
  messages: z.array(z.unknown(), {
    error: 'Missing "messages": a list of {"question", "answer"} rows or {"role", "content"} messages',
  }),
  thread_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Beyond MindsDB: a conversation the server keeps; its earlier turns are the memory'),
});

export const completionAnswer = z.object({
  message: z.object({
    content: z.string(),
    role: z.literal('assistant'),
    trace_id: z.string().describe('The run: GET …/runs/{trace_id} shows every step'),
    context: z.array(z.unknown()).optional(),
    sql: z.array(z.string()).optional().describe('Beyond MindsDB: the queries the agent ran'),
  }),
});

export const runsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  before: z
    .string()
    .regex(/^\d+$/, 'a log position')
    .optional()
    .describe('Only runs started before this log position (paging, newest first)'),
});

const runSchema = z.record(z.string(), z.unknown()).describe('A run: question, answer, status, usage, SQL');
export const runsAnswer = z.array(runSchema);
export const runAnswer = runSchema.describe('A run with its steps: every model call and tool call, in order');
