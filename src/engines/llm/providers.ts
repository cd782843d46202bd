import { z } from 'zod';
import type { OutboundPolicy } from '../../http/outbound';
import { LlmConfigError } from './errors';

/**
 * Every provider we reach through the OpenAI chat protocol with a `baseURL`. Anthropic and Google
 * serve that protocol themselves (their "OpenAI SDK compatibility" endpoints), so they cost a
 * default URL and nothing else; a native adapter can replace them behind `LlmClient` later.
 */
const PROVIDERS = {
  openai: { defaultBaseUrl: undefined },
  openai_compatible: { defaultBaseUrl: undefined },
  azure_openai: { defaultBaseUrl: undefined },
  vllm: { defaultBaseUrl: 'http://localhost:8000/v1' },
  ollama: { defaultBaseUrl: 'http://localhost:11434/v1' },
  litellm: { defaultBaseUrl: 'http://localhost:4000/v1' },
  lmstudio: { defaultBaseUrl: 'http://localhost:1234/v1' },
  anthropic: { defaultBaseUrl: 'https://api.anthropic.com/v1/' },
  google: { defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai/' },
} as const satisfies Record<string, { defaultBaseUrl: string | undefined }>;

export type SupportedProvider = keyof typeof PROVIDERS;
export const SUPPORTED_PROVIDERS = Object.keys(PROVIDERS) as SupportedProvider[];

const isSupportedProvider = (name: string): name is SupportedProvider => name in PROVIDERS;

/** Providers that fall back to the service's OPENAI_BASE_URL / OPENAI_API_KEY. */
const USES_OPENAI_DEFAULTS: readonly SupportedProvider[] = ['openai', 'openai_compatible'];

const OPENAI_PUBLIC_URL = 'https://api.openai.com/v1';

/** What a client needs. Holds the key: never put it in an event, a log line or an answer. */
export type LlmSettings = {
  readonly provider: SupportedProvider;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  /** Azure gateways want `api-version` on every request. */
  readonly apiVersion?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** The ML engine the settings came from, if any. */
  readonly engine?: string;
  /** The fetch requests go through: the outbound policy's, which checks each destination again. */
  readonly fetch?: typeof fetch;
};

/** What events and answers may say about the settings. */
type LlmSettingsSummary = {
  provider: SupportedProvider;
  model: string;
  baseUrl: string;
  engine?: string;
  apiKeySet: boolean;
};

/** A `CREATE ML_ENGINE e FROM openai USING api_key=…, base_url=…`, as the lead's store has it. */
export type LlmEngine = {
  readonly name: string;
  readonly handler: string;
  readonly params: Record<string, unknown>;
};
export type LlmEngineResolver = (name: string) => Promise<LlmEngine | undefined> | LlmEngine | undefined;

/** The service-wide fallbacks (OPENAI_BASE_URL, OPENAI_API_KEY): passed in, never read from process.env here. */
export type LlmDefaults = {
  readonly openaiBaseUrl?: string;
  readonly openaiApiKey?: string;
  /** Used when an agent names no model at all. */
  readonly model?: string;
  /** Where calls may go (OUTBOUND_ALLOW): the base URL is checked before a client is made. */
  readonly outbound?: Pick<OutboundPolicy, 'checkUrl' | 'fetch'>;
};

const defaultsEnv = z.object({
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  LLM_DEFAULT_MODEL: z.string().min(1).optional(),
});

/** For the composition root: `llmDefaultsFromEnv(process.env)`. */
export const llmDefaultsFromEnv = (env: Record<string, string | undefined>): LlmDefaults => {
  const e = defaultsEnv.parse({
    OPENAI_BASE_URL: env.OPENAI_BASE_URL || undefined,
    OPENAI_API_KEY: env.OPENAI_API_KEY || undefined,
    LLM_DEFAULT_MODEL: env.LLM_DEFAULT_MODEL || undefined,
  });
  return { openaiBaseUrl: e.OPENAI_BASE_URL, openaiApiKey: e.OPENAI_API_KEY, model: e.LLM_DEFAULT_MODEL };
};

/**
 * Where an agent's LLM settings live, in both MindsDB shapes:
 * - v25: `model_name` + `provider` on the agent, keys in `params` (`openai_api_key`, `base_url`, …);
 * - v26: `params.model = {model_name, provider, api_key, base_url, …}` (SQL may store `model='gpt-4o'`).
 * `overrides` are a query's `USING …` and win over everything stored.
 */
type AgentLlmSource = {
  readonly modelName?: string | null;
  readonly provider?: string | null;
  readonly params?: Readonly<Record<string, unknown>>;
  readonly overrides?: Readonly<Record<string, unknown>>;
};

type Flat = Record<string, unknown>;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
const num = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};
const first = (layers: readonly Flat[], keys: readonly string[]): string | undefined => {
  for (const layer of layers) for (const key of keys) if (text(layer[key])) return text(layer[key]);
  return undefined;
};
const firstNumber = (layers: readonly Flat[], keys: readonly string[]): number | undefined => {
  for (const layer of layers)
    for (const key of keys) if (num(layer[key]) !== undefined) return num(layer[key]);
  return undefined;
};

/** A layer of settings: the flat keys, with a `model` object (v26) lifted over them. */
const layerOf = (source: Readonly<Record<string, unknown>> | undefined): Flat[] => {
  if (!source) return [];
  const { model, ...flat } = source;
  if (isRecord(model)) return [model, flat];
  return [typeof model === 'string' ? { ...flat, model_name: flat.model_name ?? model } : flat];
};

const keyNames = (provider: string) => [`${provider}_api_key`, 'api_key', 'openai_api_key'];
const urlNames = (provider: string) => [
  'base_url',
  `${provider}_base_url`,
  `${provider}_api_base`,
  'openai_api_base',
  'api_base',
  ...(provider === 'anthropic' ? ['anthropic_api_url'] : []),
];

/** Ollama's own URLs (`http://host:11434`, as MindsDB's `ollama_base_url`) lack the `/v1` of its OpenAI API. */
const normaliseBaseUrl = (provider: SupportedProvider, raw: string): string => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new LlmConfigError('missing_base_url', `base_url is not a URL (provider ${provider})`);
  }
  if (provider === 'ollama' && (url.pathname === '/' || url.pathname === '')) url.pathname = '/v1';
  return url.toString().replace(/\/$/, '');
};

const unsupported = (provider: string) =>
  new LlmConfigError(
    'unsupported_provider',
    `LLM provider '${provider}' is not supported; supported providers: ${SUPPORTED_PROVIDERS.join(', ')} (or the name of an ML engine created FROM one of them)`,
  );

/**
 * Turns what an agent stores (and a query's overrides) into client settings. Precedence, highest
 * first: the query's overrides, the agent's `model` object, its flat params and top-level
 * `model_name`/`provider`, the named ML engine's parameters, then the service defaults.
 * The engine is named by `engine`/`ml_engine`, or by a `provider` that is not a provider's name.
 */
export const resolveLlmSettings = async (
  source: AgentLlmSource,
  options: { defaults?: LlmDefaults; engines?: LlmEngineResolver } = {},
): Promise<LlmSettings> => {
  const defaults = options.defaults ?? {};
  const top: Flat = {};
  if (source.modelName) top.model_name = source.modelName;
  if (source.provider) top.provider = source.provider;
  // Highest first.
  const layers: Flat[] = [...layerOf(source.overrides), ...layerOf(source.params), top];

  const named = first(layers, ['provider'])?.toLowerCase();
  const engineName =
    first(layers, ['engine', 'ml_engine']) ?? (named && !isSupportedProvider(named) ? named : undefined);
  let engine: LlmEngine | undefined;
  if (engineName) {
    engine = await options.engines?.(engineName);
    if (!engine) {
      if (named === engineName) throw unsupported(engineName);
      throw new LlmConfigError('unknown_engine', `ML engine '${engineName}' does not exist`);
    }
  }
  const providerName =
    (named && isSupportedProvider(named) ? named : undefined) ?? engine?.handler.toLowerCase() ?? 'openai';
  if (!isSupportedProvider(providerName)) throw unsupported(providerName);
  const provider: SupportedProvider = providerName;
  const withEngine = engine ? [...layers, ...layerOf(engine.params)] : layers;
  const usesOpenAiDefaults = USES_OPENAI_DEFAULTS.includes(provider);

  const model = first(withEngine, ['model_name', 'model_id', 'model']) ?? defaults.model;
  if (!model)
    throw new LlmConfigError(
      'missing_model',
      'the agent names no model: set model_name (or model: {"model_name": …, "provider": …})',
    );

  const engineLayers = engine ? layerOf(engine.params) : [];
  const defaultUrl =
    (usesOpenAiDefaults ? defaults.openaiBaseUrl : undefined) ??
    PROVIDERS[provider].defaultBaseUrl ??
    (provider === 'openai' ? OPENAI_PUBLIC_URL : undefined);
  const engineUrl = first(engineLayers, urlNames(provider)) ?? defaultUrl;
  const rawUrl = first(layers, urlNames(provider)) ?? engineUrl;
  if (!rawUrl)
    throw new LlmConfigError(
      'missing_base_url',
      `provider ${provider} needs a base_url (the gateway's address)`,
    );
  const baseUrl = normaliseBaseUrl(provider, rawUrl);

  // A key goes only to the URL it was configured with: the agent's (or query's) own key to wherever
  // the agent points; an ML engine's key to the engine's URL (or its provider's default); the
  // server's OPENAI_API_KEY to OPENAI_BASE_URL (or OpenAI's own URL). A resource that names another
  // base_url and no key of its own gets no key.
  const sameUrl = (bound: string | undefined) =>
    bound !== undefined && normaliseBaseUrl(provider, bound) === baseUrl;
  const serverUrl = usesOpenAiDefaults ? (defaults.openaiBaseUrl ?? OPENAI_PUBLIC_URL) : undefined;
  const apiKey =
    first(layers, keyNames(provider)) ??
    (sameUrl(engineUrl) ? first(engineLayers, keyNames(provider)) : undefined) ??
    (usesOpenAiDefaults && sameUrl(serverUrl) ? defaults.openaiApiKey : undefined);

  const outbound = defaults.outbound;
  if (outbound) await outbound.checkUrl(baseUrl, `The ${provider} provider's base_url ${safeUrl(baseUrl)}`);

  return {
    provider,
    model,
    baseUrl,
    apiKey,
    apiVersion: first(withEngine, ['api_version', 'openai_api_version']),
    temperature: firstNumber(withEngine, ['temperature']),
    maxTokens: firstNumber(withEngine, ['max_tokens']),
    engine: engine?.name,
    ...(outbound ? { fetch: outbound.fetch } : {}),
  };
};

const safeUrl = (raw: string) => {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  url.search = '';
  return url.toString().replace(/\/$/, '');
};

/** The settings as events may record them: no key, no URL credentials or query. */
export const summarizeLlmSettings = (settings: LlmSettings): LlmSettingsSummary => ({
  provider: settings.provider,
  model: settings.model,
  baseUrl: safeUrl(settings.baseUrl),
  ...(settings.engine ? { engine: settings.engine } : {}),
  apiKeySet: settings.apiKey !== undefined,
});
