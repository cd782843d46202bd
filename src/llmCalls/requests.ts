import crypto from 'node:crypto';
import { LlmError, type LlmClient } from '../engines/llm';
import type { LlmPrompt } from '../engines/llm/llmModelSpec';
import { DomainError, messageOf } from '../shared/errors';
import { BATCH_FORMAT, batchMaxTokens, batchMessages, readBatchAnswer } from './batching';
import type { RecordLlmCall } from './decider';
import type { CallRecorder, Target } from './recording';

const MAX_ERROR_TEXT = 2_000;
const bounded = (text: string, max = MAX_ERROR_TEXT) =>
  text.length <= max ? text : `${text.slice(0, max)}…`;

export const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** What the prompt's hash covers: the messages, as sent. */
export const promptHashOf = (prompt: LlmPrompt) => sha256(JSON.stringify(prompt.messages));
export const promptChars = (prompt: LlmPrompt) =>
  prompt.messages.reduce((n, m) => n + (m.content ?? '').length, 0);

/** One prompt of a query: its hash, its answer's cache key, and its row's 1-based position. */
export type PromptEntry = {
  readonly prompt: LlmPrompt;
  readonly hash: string;
  readonly key: string;
  readonly row: number;
};

/**
 * One query's work: units (indexes into the prompts to call, one request each), whether rows are
 * still asked in batches, and the first failure (which stops the rest).
 */
export type RequestQueue = {
  readonly units: (readonly number[])[];
  batching: boolean;
  failure: unknown;
};

/** What asking one unit needs: where it goes, what it asks, and where answers and records go. */
type RequestDeps = {
  readonly target: Target;
  readonly toCall: readonly PromptEntry[];
  readonly queue: RequestQueue;
  readonly client: LlmClient;
  readonly recorder: CallRecorder;
  readonly answered: (entry: PromptEntry, text: string) => void;
  readonly signal: AbortSignal | undefined;
  /** Why an answer cannot be taken (see `AskOptions.refuses`). */
  readonly refuses?: (answer: string) => string | null;
};

/** An answer the asking function refuses (LLM_FILTER's that is not a boolean): the query fails, naming the row. */
class LlmAnswerRefused extends DomainError {
  constructor(detail: string) {
    super('BadGateway', 'LLM answer refused', detail);
  }
}

type RequestOutcome = Pick<
  RecordLlmCall['data'],
  'outcome' | 'errorKind' | 'error' | 'usage' | 'latencyMs' | 'retries'
>;

/** The chat request for one unit: one prompt as it is, or many rows in one batch. */
const chatRequest = (deps: RequestDeps, rows: readonly PromptEntry[], messages: LlmPrompt['messages']) => {
  const single = rows.length === 1;
  return {
    model: deps.target.settings.model,
    messages,
    temperature: deps.target.temperature,
    maxTokens: single ? deps.target.maxTokens : batchMaxTokens(deps.target.maxTokens, rows.length),
    ...(single
      ? rows[0]!.prompt.json
        ? { responseFormat: 'json_object' as const }
        : {}
      : { responseFormat: BATCH_FORMAT }),
    signal: deps.signal,
  };
};

/** A batch's answer: each row it answered taken, each it did not queued to be asked alone. */
const takeBatchAnswer = (deps: RequestDeps, unit: readonly number[], text: string) => {
  const byRow = readBatchAnswer(text, unit.length);
  if (byRow === undefined) deps.queue.batching = false;
  unit.forEach((i, k) => {
    const answer = byRow?.get(k + 1);
    if (answer === undefined || deps.refuses?.(answer)) deps.queue.units.push([i]);
    else deps.answered(deps.toCall[i]!, answer);
  });
};

/** A row asked alone: its answer taken, or (refused) the query's failure, naming the row. */
const takeSingleAnswer = (deps: RequestDeps, row: PromptEntry, text: string) => {
  const refusal = deps.refuses?.(text);
  if (refusal) {
    deps.queue.failure ??= new LlmAnswerRefused(
      `${deps.target.what}: the answer for row ${row.row} ${refusal}: ${JSON.stringify(bounded(text, 200))}`,
    );
    return;
  }
  deps.answered(row, text);
};

/** Asks one unit in one request, and records the request, answered or failed. */
export const askUnit = async (deps: RequestDeps, unit: readonly number[]) => {
  const { queue } = deps;
  const rows = unit.map((i) => deps.toCall[i]!);
  if (rows.length > 1 && !queue.batching) {
    queue.units.push(...unit.map((i) => [i]));
    return;
  }
  const single = rows.length === 1;
  const messages = single ? rows[0]!.prompt.messages : batchMessages(rows.map((r) => r.prompt));
  const hash = single ? rows[0]!.hash : sha256(JSON.stringify(messages));
  const chars = promptChars({ messages, json: false });
  const started = performance.now();
  /** This request's record: what it carried, and how it went. */
  const recordRequest = (outcome: RequestOutcome) =>
    deps.recorder.record([
      {
        type: 'RecordLlmCall',
        data: {
          ...deps.recorder.base(
            hash,
            chars,
            rows.map((r) => r.row),
          ),
          cached: false,
          ...outcome,
          calledAt: deps.recorder.at(),
        },
      },
    ]);
  try {
    const result = await deps.client.chat(chatRequest(deps, rows, messages));
    const text = result.message.content ?? '';
    await recordRequest({
      outcome: 'ok',
      errorKind: null,
      error: null,
      usage: result.usage,
      latencyMs: Math.round(result.latencyMs),
      retries: result.retries,
    });
    if (single) return takeSingleAnswer(deps, rows[0]!, text);
    takeBatchAnswer(deps, unit, text);
  } catch (error) {
    // A batch refused as a request (a server that knows no json_schema, or a context window
    // smaller than thought): its rows are asked alone, and so is the rest of the query.
    const refusedBatch = !single && error instanceof LlmError && error.kind === 'bad_request';
    if (refusedBatch) {
      queue.batching = false;
      queue.units.push(...unit.map((i) => [i]));
    } else queue.failure ??= error;
    const kind = error instanceof LlmError ? error.kind : 'internal';
    await recordRequest({
      outcome: 'error',
      errorKind: kind,
      error: bounded(messageOf(error)),
      usage: null,
      latencyMs: Math.round(performance.now() - started),
      retries: 0,
    }).catch(() => undefined);
  }
};

/**
 * Asks the queue's units, `concurrency` at a time, until all are asked or one fails. Rows a batch
 * left unanswered join the queue while others are asked: a worker that finds it empty waits for
 * those in flight before it stops.
 */
export const drainQueue = async (
  queue: RequestQueue,
  concurrency: number,
  ask: (unit: readonly number[]) => Promise<void>,
) => {
  const { units } = queue;
  let next = 0;
  let inFlight = 0;
  let wake = () => {};
  let woken = new Promise<void>((r) => (wake = r));
  const notify = () => {
    const w = wake;
    woken = new Promise<void>((r) => (wake = r));
    w();
  };
  const worker = async () => {
    while (queue.failure === undefined) {
      if (next < units.length) {
        const unit = units[next++]!;
        inFlight++;
        try {
          await ask(unit);
        } finally {
          inFlight--;
          notify();
        }
      } else if (inFlight > 0) await woken;
      else break;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, units.length) }, worker));
};
