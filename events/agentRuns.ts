import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const agentRunResource: ResourceDeclaration = { kind: 'agentRun', id: 'traceId' };
const agentThreadResource: ResourceDeclaration = { kind: 'agentThread', id: 'threadId' };

/**
 * An agent run, on its own stream (`agent-run-<trace id>`): runs are high-volume, so they never
 * grow a project's stream. Each step the loop takes is an event, so an auditor can replay what the
 * agent was asked, what the model said, which SQL ran (or was refused, and why) and what it
 * answered. No event holds a key: the LLM settings are summarised, tool arguments and long texts
 * are kept as bounded text.
 */
const usage = z
  .object({
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    totalTokens: z.number().int(),
  })
  .nullable();

const run = { traceId: z.string(), projectId: z.number().int(), project: z.string() };

export const AgentRunStarted = defineEvent(
  'AgentRunStarted',
  z.object({
    ...run,
    agentId: z.number().int(),
    agent: z.string(),
    /** The log position of the agent's definition the run used (its ETag). */
    agentVersion: z.string(),
    question: z.string(),
    historyMessages: z.number().int(),
    threadId: z.string().nullable(),
    /** Which door the question came in by: rest, sql, mysql, chatbot. */
    via: z.string(),
    /**
     * Who asked, as LLM calls name a caller: the model calls of the run count against this user's,
     * token's and project's LLM budgets. Absent on runs recorded before budgets held agents.
     */
    caller: z
      .object({ actor: z.string(), user: z.string().nullable(), role: z.string().nullable() })
      .optional(),
    llm: z.object({
      provider: z.string(),
      model: z.string(),
      baseUrl: z.string().nullable(),
      engine: z.string().nullable(),
      keyProvided: z.boolean(),
    }),
    tools: z.array(z.string()),
    maxSteps: z.number().int(),
    timeoutMs: z.number().int(),
    stream: z.boolean(),
    startedAt: z.iso.datetime(),
  }),
  { resource: agentRunResource },
);

/** One call to the model: what was asked of it and what it answered. */
export const AgentRunModelCalled = defineEvent(
  'AgentRunModelCalled',
  z.object({
    traceId: z.string(),
    step: z.number().int(),
    model: z.string(),
    messageCount: z.number().int(),
    toolChoice: z.string().nullable(),
    finishReason: z.string(),
    content: z.string().nullable(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
    usage,
    latencyMs: z.number().int(),
    retries: z.number().int(),
    at: z.iso.datetime(),
  }),
  { resource: agentRunResource },
);

/** One tool call: its arguments, and what came of it (rows, or the error the model was told). */
export const AgentRunToolCalled = defineEvent(
  'AgentRunToolCalled',
  z.object({
    traceId: z.string(),
    step: z.number().int(),
    callId: z.string(),
    name: z.string(),
    kind: z.string(),
    /** The arguments as the model wrote them (JSON text, bounded). */
    arguments: z.string(),
    ok: z.boolean(),
    error: z.string().nullable(),
    rejected: z.boolean(),
    sql: z.string().nullable(),
    rows: z.number().int().nullable(),
    /**
     * sha256 of the result's canonical JSON (columns, first 100 rows, their count;
     * src/engines/agentLoop/resultDigest.ts): a replay compares it with today's. Absent: recorded before
     * digests, or no rows answered.
     */
    resultDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    ms: z.number().int(),
    at: z.iso.datetime(),
  }),
  { resource: agentRunResource },
);

export const AgentRunAnswered = defineEvent(
  'AgentRunAnswered',
  z.object({
    traceId: z.string(),
    answer: z.string(),
    sql: z.array(z.string()),
    /** Retrieved context (knowledge-base chunks), as JSON text (bounded). */
    context: z.string(),
    steps: z.number().int(),
    usage,
    ms: z.number().int(),
    answeredAt: z.iso.datetime(),
  }),
  { resource: agentRunResource },
);

export const AgentRunFailed = defineEvent(
  'AgentRunFailed',
  z.object({
    traceId: z.string(),
    kind: z.string(),
    message: z.string(),
    steps: z.number().int(),
    usage,
    ms: z.number().int(),
    failedAt: z.iso.datetime(),
  }),
  { resource: agentRunResource },
);

/**
 * A question and its answer in a conversation kept by the server (`thread_id`), on the thread's own
 * stream: the next question of the thread is asked with these as its history.
 */
export const AgentThreadTurn = defineEvent(
  'AgentThreadTurn',
  z.object({
    threadId: z.string(),
    project: z.string(),
    agent: z.string(),
    traceId: z.string(),
    question: z.string(),
    answer: z.string(),
    at: z.iso.datetime(),
  }),
  { resource: agentThreadResource },
);

export type AgentRunStarted = EventOf<typeof AgentRunStarted>;
export type AgentRunModelCalled = EventOf<typeof AgentRunModelCalled>;
export type AgentRunToolCalled = EventOf<typeof AgentRunToolCalled>;
export type AgentRunAnswered = EventOf<typeof AgentRunAnswered>;
export type AgentRunFailed = EventOf<typeof AgentRunFailed>;
export type AgentThreadTurn = EventOf<typeof AgentThreadTurn>;
export type AgentRunEvent =
  | AgentRunStarted
  | AgentRunModelCalled
  | AgentRunToolCalled
  | AgentRunAnswered
  | AgentRunFailed
  | AgentThreadTurn;
export const agentRunContracts = [
  AgentRunStarted,
  AgentRunModelCalled,
  AgentRunToolCalled,
  AgentRunAnswered,
  AgentRunFailed,
  AgentThreadTurn,
] as const;
