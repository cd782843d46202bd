import { HASHING_DIMENSIONS, HASHING_PROVIDER, hashingEmbed } from '../engines/search/hashingEmbedder';
import {
  createLlmClient,
  resolveLlmSettings,
  type LlmDefaults,
  type LlmEngineResolver,
} from '../engines/llm';
import { badGateway, invalid, isDomainError } from '../shared/errors';
import type { KnowledgeBase } from './state';

/** What reaching a model needs: the engines' keys from the log, the defaults, and how long to wait. */
export type KnowledgeBaseModelPorts = {
  readonly engines: LlmEngineResolver;
  readonly defaults: LlmDefaults;
  readonly requestTimeoutMs: number;
};

/** The built-in hashing model embeds here, in process; any other provider is reached over HTTP. */
export const isBuiltInModel = (model: Record<string, unknown>) => {
  const provider = String(model.provider ?? HASHING_PROVIDER).toLowerCase();
  return provider === HASHING_PROVIDER;
};

/** A knowledge base's embedding model: its provider's settings checked, and texts embedded with it. */
export const knowledgeBaseEmbedder = (ports: KnowledgeBaseModelPorts) => {
  /** A provider's settings for an embedding model (its key from the log, or OPENAI_API_KEY). */
  const providerSettings = (model: Record<string, unknown>) =>
    resolveLlmSettings(
      {
        modelName: typeof model.model_name === 'string' ? model.model_name : null,
        provider: String(model.provider),
        params: model,
      },
      { defaults: ports.defaults, engines: ports.engines },
    ).catch((error: unknown) => {
      // A destination the outbound policy refuses stays a 403.
      if (isDomainError(error)) throw error;
      throw invalid((error as Error).message, 'Invalid embedding model');
    });

  /** Embeds texts with the knowledge base's model: the built-in one here, a provider's over HTTP. */
  const embed = async (kb: KnowledgeBase, texts: readonly string[], signal?: AbortSignal) => {
    const model = kb.embeddingModel;
    if (isBuiltInModel(model)) {
      const dimensions = Number(model.dimensions ?? HASHING_DIMENSIONS);
      return { kind: 'hashing' as const, dimensions, vectors: hashingEmbed(texts, dimensions) };
    }
    const settings = await providerSettings(model);
    const client = createLlmClient(settings, { requestTimeoutMs: ports.requestTimeoutMs });
    const vectors = await client
      .embed({ model: settings.model, input: [...texts], signal })
      .catch((error: unknown) => {
        throw badGateway(
          `The embedding provider failed: ${(error as Error).message}`,
          'Embedding provider error',
        );
      });
    const dimensions = vectors[0]?.length ?? 0;
    if (vectors.length !== texts.length || vectors.some((v) => v.length !== dimensions || dimensions === 0))
      throw badGateway(
        'The embedding provider answered vectors of mixed or missing sizes',
        'Embedding provider error',
      );
    return {
      kind: 'stored' as const,
      dimensions,
      vectors: vectors.map((v) => Float32Array.from(v)),
      provider: settings.provider,
      model: settings.model,
    };
  };

  return { providerSettings, embed };
};

export type KnowledgeBaseEmbedder = ReturnType<typeof knowledgeBaseEmbedder>;
