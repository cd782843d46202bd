import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const modelResource: ResourceDeclaration = { kind: 'model' };
const llmQueryResource: ResourceDeclaration = { kind: 'llmQuery', id: 'queryId' };

/**
 * An LLM model's version is ready as soon as it is defined (MindsDB's `CREATE MODEL … USING
 * engine = '<an openai engine>', prompt_template = '…'`): nothing is learnt from rows, the model is
 * its provider, its model name and its prompt. Appended with its `ModelVersionDefined` on the
 * project's stream; the version is then `complete` and answers queries by calling its provider.
 */
export const LlmModelReady = defineEvent(
  'LlmModelReady',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    version: z.number().int().min(1),
    /** The ML engine it calls through (CREATE ML_ENGINE); nullable for a handler named without an engine (not written today). */
    engine: z.string().nullable(),
    /** The engine's handler: openai, ollama, vllm, … */
    provider: z.string(),
    /** `model_name` as given (null: the provider's default, LLM_DEFAULT_MODEL). */
    providerModel: z.string().nullable(),
    /** default, conversational, conversational-full or json_struct. */
    mode: z.string(),
    /** The columns its prompt template (or question/context columns) reads, in order of appearance. */
    inputs: z.array(z.string()),
    readyAt: z.iso.datetime(),
  }),
  { resource: modelResource },
);

const usage = z
  .object({
    promptTokens: z.number().int().min(0),
    completionTokens: z.number().int().min(0),
    totalTokens: z.number().int().min(0),
  })
  .nullable();

/**
 * One answer an LLM gave a SQL query: a row of an LLM model queried or joined, or an `LLM()` call.
 * On the query's own stream (`llm-query-<query id>`), never a project's: a JOIN over a table asks
 * once per distinct prompt, and a project's stream stays small. No field holds a secret or the
 * rows' data: the prompt is kept as its hash (SHA-256 of the messages sent) and its length, the
 * answer not at all; the provider's address without credentials or query. `cached`: answered from
 * this server's answer cache (LLM_CACHE_*), no call made, no tokens spent.
 */
export const LlmCallRecorded = defineEvent(
  'LlmCallRecorded',
  z.object({
    queryId: z.string(),
    /** 1, 2, … within the query, in the order the answers came. */
    seq: z.number().int().min(1),
    /** The project of the model (or the query's database for `LLM()`). */
    project: z.string().nullable(),
    /** The LLM model's name and version; null for `LLM()`. */
    model: z.string().nullable(),
    modelVersion: z.number().int().min(1).nullable(),
    /** `model` (an LLM model queried or joined) or `function` (`LLM()`). */
    source: z.enum(['model', 'function']),
    provider: z.string(),
    providerModel: z.string(),
    engine: z.string().nullable(),
    baseUrl: z.string(),
    promptHash: z.string().regex(/^[0-9a-f]{64}$/),
    promptChars: z.number().int().min(0),
    /**
     * The rows the request carried: 1-based positions, among the rows the query asked, of the first
     * row of each prompt (one for a prompt asked alone, up to 16 for a batch). Absent: recorded
     * before batching.
     */
    rows: z.array(z.number().int().min(1)).max(64).optional(),
    cached: z.boolean(),
    outcome: z.enum(['ok', 'error']),
    errorKind: z.string().nullable(),
    error: z.string().nullable(),
    usage,
    latencyMs: z.number().int().min(0),
    retries: z.number().int().min(0),
    caller: z.object({
      /** `user:<id>`, `token:<id>`, `address:<ip>` (authentication off) or `system` (a job). */
      actor: z.string(),
      user: z.string().nullable(),
      role: z.string().nullable(),
    }),
    /** Which door the query came in by: sql, mysql, postgres, job, … */
    via: z.string(),
    calledAt: z.iso.datetime(),
  }),
  { resource: llmQueryResource },
);

export type LlmModelReady = EventOf<typeof LlmModelReady>;
export type LlmCallRecorded = EventOf<typeof LlmCallRecorded>;
export type LlmModelEvent = LlmModelReady | LlmCallRecorded;
export const llmModelContracts = [LlmModelReady, LlmCallRecorded] as const;
