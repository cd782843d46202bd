import crypto from 'node:crypto';
import { settled, type AppContext } from '../context';
import {
  LlmError,
  providerProblem,
  summarizeLlmSettings,
  type LlmClient,
  type LlmSettings,
} from '../engines/llm';
import type { LlmQueryBudget } from '../engines/llm/functionAsk';
import type { LlmPrompt } from '../engines/llm/llmModelSpec';
import { describeRefusal, LlmBudgetExceeded, type SpendingPort } from '../llmBudgets/state';
import { DomainError, forbidden } from '../shared/errors';
import { callerOfRequest } from '../shared/requestContext';
import type { AnswerCache } from './answerCache';
import { MAX_BATCH_ROWS, planBatches } from './batching';
import { callRecorder, type CallRecorder, type Target } from './recording';
import {
  askUnit,
  drainQueue,
  promptChars,
  promptHashOf,
  sha256,
  type PromptEntry,
  type RequestQueue,
} from './requests';

/** Too many calls for one query: refused before any is made (SQL answers error 1153, src/sql/errors.ts). */
export class LlmCallsCapExceeded extends DomainError {
  constructor(detail: string) {
    super('PayloadTooLarge', 'Too many LLM calls', detail);
  }
}

/** How one ask of a query goes: its query's budget, and what an answer must be. */
export type AskOptions = {
  readonly budget?: LlmQueryBudget;
  /**
   * Why an answer cannot be taken (null: it can). A batched row's answer refused is asked again
   * alone; a refused answer to a row asked alone fails the query, naming the row.
   */
  readonly refuses?: (answer: string) => string | null;
};

/** What asking needs of the service: the log and clock, the bounds, the answer cache and the clients. */
export type Asking = {
  readonly ctx: AppContext;
  readonly limits: AppContext['config']['llmSql'];
  readonly cache: AnswerCache;
  readonly clientFor: (settings: LlmSettings) => LlmClient;
  /** The LLM budgets that hold the caller, checked (and held) before the first call (src/llmBudgets). */
  readonly spending: SpendingPort;
};

/** A provider's failure as the query's error: which side failed, named for the caller. */
const callFailure = (what: string, error: LlmError): DomainError =>
  providerProblem(error.kind, `${what}: ${error.message}`, {
    timedOut: 'LLM call timed out',
    aborted: { title: 'LLM call cancelled', detail: `${what}: the query was interrupted` },
  });

/** Everything that makes an answer: the cache's key. */
const cacheKey = (target: Target, baseUrl: string, prompt: LlmPrompt, hash: string) =>
  sha256(
    JSON.stringify([
      target.settings.provider,
      baseUrl,
      target.settings.model,
      target.temperature ?? null,
      target.maxTokens ?? null,
      prompt.json,
      hash,
    ]),
  );

/** Each distinct prompt once: its answer taken from the cache, or to be asked. */
const splitByCache = (entries: readonly PromptEntry[], cache: AnswerCache) => {
  const answers = new Map<string, string>();
  const seen = new Set<string>();
  const toCall: PromptEntry[] = [];
  const fromCache: PromptEntry[] = [];
  for (const e of entries) {
    if (seen.has(e.key)) continue;
    seen.add(e.key);
    const cached = cache.get(e.key);
    if (cached === undefined) toCall.push(e);
    else {
      answers.set(e.key, cached);
      fromCache.push(e);
    }
  }
  return { answers, toCall, fromCache };
};

/** The answers taken from the cache, recorded as calls that cost nothing. */
const recordCached = (recorder: CallRecorder, fromCache: readonly PromptEntry[]) =>
  recorder.record(
    fromCache.map((e) => ({
      type: 'RecordLlmCall',
      data: {
        ...recorder.base(e.hash, promptChars(e.prompt), [e.row]),
        cached: true,
        outcome: 'ok',
        errorKind: null,
        error: null,
        usage: null,
        latencyMs: 0,
        retries: 0,
        calledAt: recorder.at(),
      },
    })),
  );

/** The tokens prompts will cost, estimated before they are sent: four characters a token. */
const estimatedTokens = (entries: readonly PromptEntry[]) =>
  Math.ceil(entries.reduce((sum, e) => sum + promptChars(e.prompt), 0) / 4);

/**
 * Answers every prompt, asking each distinct one once (or taking it from the cache), a few at a
 * time; the answers in the prompts' order. One failed call (after its retries) fails the batch:
 * the calls not yet made are not made.
 */
export const askAll = async (
  asking: Asking,
  target: Target,
  prompts: readonly LlmPrompt[],
  /** Each prompt's row: its 1-based position among the rows the query asked. */
  rowNumbers: readonly number[],
  signal?: AbortSignal,
  options: AskOptions = {},
) => {
  const { ctx, limits, cache } = asking;
  const { budget, refuses } = options;
  const queryId = budget?.queryId ?? crypto.randomUUID();
  const summary = summarizeLlmSettings(target.settings);
  const who = callerOfRequest();
  // Roles say who may spend at all: the auditor reads the log, and asks no LLM (docs/security.md).
  if (who.caller.role === 'auditor')
    throw forbidden(`The auditor role may not spend on LLM calls: ${target.what} is not allowed`);
  const entries = prompts.map((prompt, k): PromptEntry => {
    const hash = promptHashOf(prompt);
    return { prompt, hash, key: cacheKey(target, summary.baseUrl, prompt, hash), row: rowNumbers[k]! };
  });
  const { answers, toCall, fromCache } = splitByCache(entries, cache);
  const planned = planBatches(
    toCall.map((e) => e.prompt),
    target.settings.model,
  );
  const before = budget?.planned ?? 0;
  const recorder = callRecorder(ctx, queryId, target, summary, who);
  const admission = await asking.spending({
    queryId,
    what: target.what,
    who,
    project: target.about.project,
    plan: { calls: planned.length, tokens: estimatedTokens(toCall), before },
    serverCap: limits.maxCalls,
  });
  const { refusal } = admission;
  if (refusal) {
    if (refusal.scope !== 'server') throw new LlmBudgetExceeded(describeRefusal(refusal, target.what));
    throw new LlmCallsCapExceeded(
      `${target.what} would make ${planned.length} calls (provider requests: ${toCall.length} distinct prompts, up to ${MAX_BATCH_ROWS} in one request)${
        before ? `, after ${before} made by the query's other LLM functions` : ''
      }; a query may make at most ${limits.maxCalls} (LLM_SQL_MAX_CALLS): add a LIMIT, or filter the rows`,
    );
  }
  if (budget) budget.planned += planned.length;
  try {
    await recordCached(recorder, fromCache);
    const client = asking.clientFor(target.settings);
    // Units of work: indexes into toCall, one request each. Rows a batch did not answer are
    // appended, each alone; once a provider answers a batch with no JSON at all, batches are
    // asked row by row for the rest of the query.
    const queue: RequestQueue = { units: [...planned], batching: true, failure: undefined };
    const answered = (e: PromptEntry, text: string) => {
      answers.set(e.key, text);
      cache.set(e.key, text);
    };
    const deps = { target, toCall, queue, client, recorder, answered, signal, refuses };
    await drainQueue(queue, limits.concurrency, (unit) => askUnit(deps, unit));
    if (queue.failure !== undefined) {
      if (queue.failure instanceof LlmError) throw callFailure(target.what, queue.failure);
      throw queue.failure;
    }
  } finally {
    // The calls are on the log when the answer goes out, and in the read model for the next query
    // (whose budget check counts them from there on).
    await settled(ctx, recorder.last()).catch(() => undefined);
    admission.release(recorder.last());
  }
  return entries.map((e) => answers.get(e.key)!);
};
