import type { AppContext } from '../context';
import { isLlmConfigError, llmClientPool, type LlmSettings } from '../engines/llm';
import {
  answerValue,
  llmModelSpec,
  promptsOf,
  type LlmModelSpec,
  type LlmPrompt,
} from '../engines/llm/llmModelSpec';
import { invalid, isDomainError } from '../shared/errors';
import { answerCache } from './answerCache';
import { askAll, type Asking } from './asking';
import { answerFunctionAsk, FUNCTION_NAMES } from './functionAsks';
import type { LlmFunctionAnswer, LlmFunctionAsk } from '../engines/llm/functionAsk';
import {
  configProblem,
  functionSettings,
  settingsOfModel,
  type LlmCallPorts,
  type LlmModelDefinition,
} from './settings';

/** One SQL query's calls: what stops them, and the project they are about. */
type LlmQueryOptions = {
  readonly signal?: AbortSignal;
  /** The query's `USING …` (QUERY_OVERRIDES only). */
  readonly overrides?: Readonly<Record<string, unknown>>;
};

/** What the service's operations share: the asking machinery, and where settings come from. */
type LlmCallDeps = { readonly asking: Asking; readonly ports: LlmCallPorts };

/** The service's `answerModel`: the prompts of an LLM model's rows asked, the answers in its target column. */
const answerModel = async (
  { asking, ports }: LlmCallDeps,
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
    settings = await settingsOfModel(ports, model);
  } catch (error) {
    throw configProblem(what, error);
  }
  const asked = prompts.flatMap((p, i) => (p ? [{ i, p }] : []));
  const texts = await askAll(
    asking,
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
};

/**
 * The service's `answerFunction`: an LLM function's inputs (`LLM()`, LLM_FILTER, LLM_REDUCE,
 * LLM_RERANK: ./functionAsks.ts) asked of LLM_FUNCTION_*'s model.
 */
const answerFunction = async (
  { asking, ports }: LlmCallDeps,
  asked: LlmFunctionAsk,
  project: string | null,
  options: LlmQueryOptions = {},
): Promise<LlmFunctionAnswer[]> => {
  const what = FUNCTION_NAMES[asked.kind];
  let settings: LlmSettings;
  try {
    settings = await functionSettings(asking.ctx, ports);
  } catch (error) {
    const problem = configProblem(what, error);
    if (isDomainError(problem) && isLlmConfigError(error) && error.kind === 'missing_model')
      throw invalid(
        `${what} needs a model: set LLM_FUNCTION_MODEL_NAME (or LLM_DEFAULT_MODEL), and LLM_FUNCTION_BASE_URL / LLM_FUNCTION_API_KEY for where it is served`,
        'Invalid LLM settings',
      );
    throw problem;
  }
  return answerFunctionAsk(
    { asking, settings, project, signal: options.signal, options: { budget: asked.budget } },
    asked,
  );
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
  const deps: LlmCallDeps = {
    asking: {
      ctx,
      limits,
      cache,
      clientFor: llmClientPool({ requestTimeoutMs: ports.requestTimeoutMs, retry: ports.retry }),
      spending: ports.spending,
    },
    ports,
  };

  return {
    /**
     * An LLM model's answers for rows: its target column (the answer; JSON text in json_struct mode;
     * NULL for a conversation's earlier rows) and the input columns its prompt reads, echoed.
     */
    answerModel: (
      model: LlmModelDefinition,
      rows: readonly Readonly<Record<string, unknown>>[],
      options?: LlmQueryOptions,
    ): Promise<Record<string, unknown>[]> => answerModel(deps, model, rows, options),

    /** An LLM function's distinct inputs answered, in order, on LLM_FUNCTION_*'s model (./functionAsks.ts). */
    answerFunction: (
      asked: LlmFunctionAsk,
      project: string | null,
      options?: LlmQueryOptions,
    ): Promise<LlmFunctionAnswer[]> => answerFunction(deps, asked, project, options),

    /**
     * An evaluation's judge (llm_relevancy, EVALUATE AGENT's llm_judge): its prompts asked as they
     * are, at temperature 0 (MindsDB's reranker asks so: a judge that answers the same each time),
     * through the same caps, budgets, cache and recording as the functions' calls. The answers, in order.
     */
    askJudge: (
      request: { settings: LlmSettings; prompts: readonly LlmPrompt[]; project: string; what: string },
      signal?: AbortSignal,
    ): Promise<string[]> =>
      askAll(
        deps.asking,
        {
          settings: request.settings,
          temperature: 0,
          maxTokens: request.settings.maxTokens,
          about: { project: request.project, model: null, modelVersion: null, source: 'function' },
          what: request.what,
        },
        request.prompts,
        request.prompts.map((_, i) => i + 1),
        signal,
      ),
  };
};

export type LlmCallsService = ReturnType<typeof llmCallsService>;
