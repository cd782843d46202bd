import crypto from 'node:crypto';
import { settled, type AppContext } from '../context';
import {
  createLlmClient,
  isLlmConfigError,
  LlmError,
  providerProblem,
  resolveLlmSettings,
  summarizeLlmSettings,
  type LlmClient,
  type LlmDefaults,
  type LlmEngineResolver,
  type LlmSettings,
  type RetryPolicy,
} from '../llm';
import {
  answerValue,
  llmModelSpec,
  LlmSpecError,
  promptsOf,
  type LlmModelSpec,
  type LlmPrompt,
} from '../llm/llmModelSpec';
import type { LlmVersion } from '../models/state';
import { DomainError, invalid, isDomainError, messageOf } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { answerCache } from './answerCache';
import {
  BATCH_FORMAT,
  batchMaxTokens,
  batchMessages,
  MAX_BATCH_ROWS,
  planBatches,
  readBatchAnswer,
} from './batching';
import { decideLlmCalls, type RecordLlmCall } from './decider';
import { llmQueryAggregate, llmQueryStream } from './state';

/** Where LLM settings come from: named ML engines, and the server's defaults. */
export type LlmCallPorts = {
  readonly engines: LlmEngineResolver;
  /** OPENAI_BASE_URL, OPENAI_API_KEY, LLM_DEFAULT_MODEL, the outbound policy. */
  readonly defaults: LlmDefaults;
  readonly requestTimeoutMs: number;
  readonly retry?: Partial<RetryPolicy>;
};

/** An LLM model as the models slice keeps it: its real options (secrets included), read from the log. */
export type LlmModelDefinition = {
  readonly project: string;
  readonly name: string;
  readonly version: number;
  readonly target: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly llm: LlmVersion;
};

/** One SQL query's calls: what stops them, and the project they are about. */
export type LlmQueryOptions = {
  readonly signal?: AbortSignal;
  /** The query's `USING …` (QUERY_OVERRIDES only). */
  readonly overrides?: Readonly<Record<string, unknown>>;
};

/** Too many calls for one query: refused before any is made (the SQL layer answers error 1153). */
export class LlmCallsCapExceeded extends DomainError {
  constructor(detail: string) {
    super('PayloadTooLarge', 'Too many LLM calls', detail);
  }
}

const MAX_ERROR_TEXT = 2_000;
const bounded = (text: string, max = MAX_ERROR_TEXT) =>
  text.length <= max ? text : `${text.slice(0, max)}…`;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** What the prompt's hash covers: the messages, as sent. */
const promptHashOf = (prompt: LlmPrompt) => sha256(JSON.stringify(prompt.messages));
const promptChars = (prompt: LlmPrompt) => prompt.messages.reduce((n, m) => n + (m.content ?? '').length, 0);

/** A provider's failure as the query's error: which side failed, named for the caller. */
const callFailure = (what: string, error: LlmError): DomainError =>
  providerProblem(error.kind, `${what}: ${error.message}`, {
    timedOut: 'LLM call timed out',
    aborted: { title: 'LLM call cancelled', detail: `${what}: the query was interrupted` },
  });

/** Where the calls of one batch go, and what they are recorded as. */
type Target = {
  readonly settings: LlmSettings;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly about: {
    readonly project: string | null;
    readonly model: string | null;
    readonly modelVersion: number | null;
    readonly source: 'model' | 'function';
  };
  /** For messages: `LLM model p.m` or `LLM()`. */
  readonly what: string;
};

/**
 * LLMs asked by SQL queries: an LLM model's rows (queried or joined) and `LLM()`. Each distinct
 * prompt of a query asked once, many rows per request when there are many (./batching.ts), with
 * LLM_SQL_CONCURRENCY requests at once and at most LLM_SQL_MAX_CALLS requests planned (refused
 * before any call past it), retried on 429 and 5xx with back-off; each request recorded as it comes,
 * on the query's own stream, with its token usage; answers may be reused from the answer cache.
 */
export const llmCallsService = (ctx: AppContext, ports: LlmCallPorts) => {
  const limits = ctx.config.llmSql;
  const cache = answerCache(limits.cacheEntries, limits.cacheTtlMs);
  // One client per provider endpoint and key: queries reuse its keep-alive connections. Bounded.
  const clients = new Map<string, LlmClient>();
  const clientFor = (settings: LlmSettings) => {
    const key = JSON.stringify([settings.provider, settings.baseUrl, settings.apiKey, settings.apiVersion]);
    let client = clients.get(key);
    if (!client) {
      client = createLlmClient(settings, { requestTimeoutMs: ports.requestTimeoutMs, retry: ports.retry });
      if (clients.size >= 64) clients.delete(clients.keys().next().value as string);
      clients.set(key, client);
    }
    return client;
  };

  const caller = () => {
    const request = currentRequest();
    const actor = request?.actor ? `${request.actor.kind}:${request.actor.id}` : 'system';
    return {
      caller: {
        actor,
        user: request?.principal?.user ?? null,
        role: request?.principal?.role ?? null,
      },
      via: request?.interface ?? 'system',
    };
  };

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

  /**
   * Answers every prompt, asking each distinct one once (or taking it from the cache), a few at a
   * time; the answers in the prompts' order. One failed call (after its retries) fails the batch:
   * the calls not yet made are not made.
   */
  const askAll = async (
    target: Target,
    prompts: readonly LlmPrompt[],
    /** Each prompt's row: its 1-based position among the rows the query asked. */
    rowNumbers: readonly number[],
    signal?: AbortSignal,
  ) => {
    const queryId = crypto.randomUUID();
    const stream = llmQueryStream(queryId);
    const summary = summarizeLlmSettings(target.settings);
    const who = caller();
    const entries = prompts.map((prompt, k) => {
      const hash = promptHashOf(prompt);
      return { prompt, hash, key: cacheKey(target, summary.baseUrl, prompt, hash), row: rowNumbers[k]! };
    });
    const answers = new Map<string, string>();
    const seen = new Set<string>();
    const toCall: typeof entries = [];
    const fromCache: typeof entries = [];
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
    const planned = planBatches(
      toCall.map((e) => e.prompt),
      target.settings.model,
    );
    if (planned.length > limits.maxCalls)
      throw new LlmCallsCapExceeded(
        `${target.what} would make ${planned.length} calls (provider requests: ${toCall.length} distinct prompts, up to ${MAX_BATCH_ROWS} in one request); a query may make at most ${limits.maxCalls} (LLM_SQL_MAX_CALLS): add a LIMIT, or filter the rows`,
      );

    let last: bigint | null = null;
    const record = async (commands: RecordLlmCall[]) => {
      if (commands.length === 0) return;
      const outcome = await ctx.commands.run(stream, llmQueryAggregate, (s) => decideLlmCalls(commands, s));
      last = outcome.lastPosition ?? last;
    };
    /** What a record says of its request: one prompt's hash and size, or the batch's as sent. */
    const base = (hash: string, chars: number, rows: readonly number[]) => ({
      queryId,
      ...target.about,
      provider: summary.provider,
      providerModel: summary.model,
      engine: summary.engine ?? null,
      baseUrl: summary.baseUrl,
      promptHash: hash,
      promptChars: chars,
      rows: [...rows],
      ...who,
    });
    const at = () => ctx.clock().toISOString();

    try {
      await record(
        fromCache.map((e) => ({
          type: 'RecordLlmCall',
          data: {
            ...base(e.hash, promptChars(e.prompt), [e.row]),
            cached: true,
            outcome: 'ok',
            errorKind: null,
            error: null,
            usage: null,
            latencyMs: 0,
            retries: 0,
            calledAt: at(),
          },
        })),
      );
      const client = clientFor(target.settings);
      // Units of work: indexes into toCall, one request each. Rows a batch did not answer are
      // appended, each alone; once a provider answers a batch with no JSON at all, batches are
      // asked row by row for the rest of the query.
      const units: (readonly number[])[] = [...planned];
      let batching = true;
      let next = 0;
      let failure: unknown;
      const answered = (e: (typeof toCall)[number], text: string) => {
        answers.set(e.key, text);
        cache.set(e.key, text);
      };
      const ask = async (unit: readonly number[]) => {
        const rows = unit.map((i) => toCall[i]!);
        if (rows.length > 1 && !batching) {
          units.push(...unit.map((i) => [i]));
          return;
        }
        const single = rows.length === 1;
        const messages = single ? rows[0]!.prompt.messages : batchMessages(rows.map((r) => r.prompt));
        const hash = single ? rows[0]!.hash : sha256(JSON.stringify(messages));
        const chars = promptChars({ messages, json: false });
        const started = performance.now();
        /** This request's record: what it carried, and how it went. */
        const recordRequest = (
          outcome: Pick<
            RecordLlmCall['data'],
            'outcome' | 'errorKind' | 'error' | 'usage' | 'latencyMs' | 'retries'
          >,
        ) =>
          record([
            {
              type: 'RecordLlmCall',
              data: {
                ...base(
                  hash,
                  chars,
                  rows.map((r) => r.row),
                ),
                cached: false,
                ...outcome,
                calledAt: at(),
              },
            },
          ]);
        try {
          const result = await client.chat({
            model: target.settings.model,
            messages,
            temperature: target.temperature,
            maxTokens: single ? target.maxTokens : batchMaxTokens(target.maxTokens, rows.length),
            ...(single
              ? rows[0]!.prompt.json
                ? { responseFormat: 'json_object' as const }
                : {}
              : { responseFormat: BATCH_FORMAT }),
            signal,
          });
          const text = result.message.content ?? '';
          await recordRequest({
            outcome: 'ok',
            errorKind: null,
            error: null,
            usage: result.usage,
            latencyMs: Math.round(result.latencyMs),
            retries: result.retries,
          });
          if (single) return answered(rows[0]!, text);
          const byRow = readBatchAnswer(text, rows.length);
          if (byRow === undefined) batching = false;
          unit.forEach((i, k) => {
            const answer = byRow?.get(k + 1);
            if (answer === undefined) units.push([i]);
            else answered(toCall[i]!, answer);
          });
        } catch (error) {
          // A batch refused as a request (a server that knows no json_schema, or a context window
          // smaller than thought): its rows are asked alone, and so is the rest of the query.
          const refusedBatch = !single && error instanceof LlmError && error.kind === 'bad_request';
          if (refusedBatch) {
            batching = false;
            units.push(...unit.map((i) => [i]));
          } else failure ??= error;
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
      // Rows a batch left unanswered join the queue while others are asked: a worker that finds
      // it empty waits for those in flight before it stops.
      let inFlight = 0;
      let wake = () => {};
      let woken = new Promise<void>((r) => (wake = r));
      const notify = () => {
        const w = wake;
        woken = new Promise<void>((r) => (wake = r));
        w();
      };
      const worker = async () => {
        while (failure === undefined) {
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
      await Promise.all(Array.from({ length: Math.min(limits.concurrency, units.length) }, worker));
      if (failure !== undefined) {
        if (failure instanceof LlmError) throw callFailure(target.what, failure);
        throw failure;
      }
    } finally {
      // The calls are on the log when the answer goes out, and in the read model for the next query.
      await settled(ctx, last).catch(() => undefined);
    }
    return entries.map((e) => answers.get(e.key)!);
  };

  const configProblem = (what: string, error: unknown): unknown => {
    if (isLlmConfigError(error)) return invalid(`${what}: ${error.message}`, 'Invalid LLM settings');
    if (error instanceof LlmSpecError) return invalid(`${what}: ${error.message}`, 'Invalid LLM model');
    return error;
  };

  /** A model's settings: its engine's (or its handler's, with the server's defaults), its own options over them. */
  const settingsOfModel = async (model: LlmModelDefinition) => {
    const { engine: _engine, ml_engine: _ml, provider: _provider, ...own } = model.options;
    return resolveLlmSettings(
      {
        params: {
          ...own,
          ...(model.llm.engine ? { engine: model.llm.engine } : { provider: model.llm.provider }),
        },
      },
      { defaults: ports.defaults, engines: ports.engines },
    );
  };

  /** LLM()'s settings: LLM_FUNCTION_* over the server's defaults (MindsDB's variables). */
  const functionSettings = () => {
    const f = ctx.config.llmFunction;
    return resolveLlmSettings(
      {
        params: {
          provider: 'openai',
          ...(f.model ? { model_name: f.model } : {}),
          ...(f.baseUrl ? { base_url: f.baseUrl } : {}),
          ...(f.apiKey ? { api_key: f.apiKey } : {}),
          ...(f.temperature !== undefined ? { temperature: f.temperature } : {}),
          ...(f.maxTokens !== undefined ? { max_tokens: f.maxTokens } : {}),
        },
      },
      { defaults: ports.defaults },
    );
  };

  return {
    /**
     * An LLM model's answers for rows: its target column (the answer; JSON text in json_struct mode;
     * NULL for a conversation's earlier rows) and the input columns its prompt reads, echoed.
     */
    answerModel: async (
      model: LlmModelDefinition,
      rows: readonly Readonly<Record<string, unknown>>[],
      options: LlmQueryOptions = {},
    ): Promise<Record<string, unknown>[]> => {
      const what = `LLM model ${model.project}.${model.name}`;
      let spec: LlmModelSpec;
      let prompts: (LlmPrompt | null)[];
      let settings: LlmSettings;
      try {
        spec = llmModelSpec(model.target, model.options, options.overrides ?? {});
        prompts = promptsOf(spec, rows);
        settings = await settingsOfModel(model);
      } catch (error) {
        throw configProblem(what, error);
      }
      const asked = prompts.flatMap((p, i) => (p ? [{ i, p }] : []));
      const texts = await askAll(
        {
          settings,
          temperature: spec.temperature ?? settings.temperature,
          maxTokens: spec.maxTokens ?? settings.maxTokens,
          about: { project: model.project, model: model.name, modelVersion: model.version, source: 'model' },
          what,
        },
        asked.map((a) => a.p),
        asked.map((a) => a.i + 1),
        options.signal,
      );
      const byRow = new Map<number, string>();
      try {
        asked.forEach((a, k) => byRow.set(a.i, answerValue(spec, texts[k]!)));
      } catch (error) {
        throw configProblem(what, error);
      }
      return rows.map((row, i) => ({
        ...Object.fromEntries(spec.inputs.map((c) => [c, row[c] ?? null])),
        [spec.target]: byRow.get(i) ?? null,
      }));
    },

    /** `LLM(prompt)` for each prompt (NULL asks nothing and answers NULL), on the default model. */
    answerFunction: async (
      prompts: readonly (string | null)[],
      project: string | null,
      options: LlmQueryOptions = {},
    ): Promise<(string | null)[]> => {
      let settings: LlmSettings;
      try {
        settings = await functionSettings();
      } catch (error) {
        const problem = configProblem('LLM()', error);
        if (isDomainError(problem) && isLlmConfigError(error) && error.kind === 'missing_model')
          throw invalid(
            'LLM() needs a model: set LLM_FUNCTION_MODEL_NAME (or LLM_DEFAULT_MODEL), and LLM_FUNCTION_BASE_URL / LLM_FUNCTION_API_KEY for where it is served',
            'Invalid LLM settings',
          );
        throw problem;
      }
      const asked = prompts.flatMap((p, i) => (p === null ? [] : [{ i, p }]));
      const texts = await askAll(
        {
          settings,
          temperature: settings.temperature,
          maxTokens: settings.maxTokens,
          about: { project, model: null, modelVersion: null, source: 'function' },
          what: 'LLM()',
        },
        asked.map((a) => ({ messages: [{ role: 'user' as const, content: a.p }], json: false })),
        asked.map((a) => a.i + 1),
        options.signal,
      );
      const out: (string | null)[] = prompts.map(() => null);
      asked.forEach((a, k) => (out[a.i] = texts[k]!));
      return out;
    },

    /** The answer cache's size and hits since start (the bench reads it). */
    cacheStats: () => cache.stats(),
  };
};

export type LlmCallsService = ReturnType<typeof llmCallsService>;
