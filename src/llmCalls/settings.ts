import type { AppContext } from '../context';
import {
  isLlmConfigError,
  resolveLlmSettings,
  type LlmDefaults,
  type LlmEngineResolver,
  type RetryPolicy,
} from '../engines/llm';
import { LlmSpecError } from '../engines/llm/llmModelSpec';
import type { SpendingPort } from '../llmBudgets/state';
import type { LlmVersion } from '../models/state';
import { invalid } from '../shared/errors';

/** Where LLM settings come from: named ML engines, and the server's defaults. */
export type LlmCallPorts = {
  readonly engines: LlmEngineResolver;
  /** OPENAI_BASE_URL, OPENAI_API_KEY, LLM_DEFAULT_MODEL, the outbound policy. */
  readonly defaults: LlmDefaults;
  readonly requestTimeoutMs: number;
  readonly retry?: Partial<RetryPolicy>;
  /** The LLM budgets that hold a caller (src/llmBudgets), checked before a query's first call. */
  readonly spending: SpendingPort;
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

/** Settings or a model spec that cannot be used, as the query's error; anything else as it is. */
export const configProblem = (what: string, error: unknown): unknown => {
  if (isLlmConfigError(error)) return invalid(`${what}: ${error.message}`, 'Invalid LLM settings');
  if (error instanceof LlmSpecError) return invalid(`${what}: ${error.message}`, 'Invalid LLM model');
  return error;
};

/** A model's settings: its engine's (or its handler's, with the server's defaults), its own options over them. */
export const settingsOfModel = async (ports: LlmCallPorts, model: LlmModelDefinition) => {
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
export const functionSettings = (ctx: AppContext, ports: LlmCallPorts) => {
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
