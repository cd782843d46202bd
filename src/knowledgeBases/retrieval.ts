import type { AppContext } from '../context';
import { createLlmClient, resolveLlmSettings, type ChatRequest, type LlmClient } from '../engines/llm';
import { badGateway, invalid, isDomainError } from '../shared/errors';
import type { KnowledgeBaseEmbedder, KnowledgeBaseModelPorts } from './embedding';
import type { LoadKnowledgeBase } from './lookup';
import { searchKnowledgeBase } from './search';
import { settingsOf } from './state';

/**
 * The language model an option names (`model_name`, `provider`, its params), and a client for it;
 * a choice that cannot be used is the request's fault, worded by `refuse`.
 */
export const llmOfOption = async (
  ports: KnowledgeBaseModelPorts,
  llm: Record<string, unknown>,
  refuse: (message: string) => Error,
) => {
  const settings = await resolveLlmSettings(
    {
      modelName: typeof llm.model_name === 'string' ? llm.model_name : null,
      provider: typeof llm.provider === 'string' ? llm.provider : 'openai',
      params: llm,
    },
    { defaults: ports.defaults, engines: ports.engines },
  ).catch((error: unknown) => {
    if (isDomainError(error)) throw error;
    throw refuse((error as Error).message);
  });
  return { settings, client: createLlmClient(settings, { requestTimeoutMs: ports.requestTimeoutMs }) };
};

/** A chat whose failure is the language model's (a bad gateway), not the request's. */
export const chatOrBadGateway = (client: LlmClient, request: ChatRequest) =>
  client.chat(request).catch((error: unknown) => {
    throw badGateway(`The language model failed: ${(error as Error).message}`, 'Language model error');
  });

/** An answer from the language model `llm` names, grounded in `documents` and citing their chunk ids. */
const groundedAnswer = async (
  ports: KnowledgeBaseModelPorts,
  llm: Record<string, unknown>,
  query: string,
  documents: readonly { chunk_id: string; chunk_content: string }[],
  signal?: AbortSignal,
) => {
  const { settings, client } = await llmOfOption(ports, llm, (message) =>
    invalid(message, 'Invalid llm_model'),
  );
  const passages = documents.map((d) => `[${d.chunk_id}]\n${d.chunk_content}`).join('\n\n');
  const result = await chatOrBadGateway(client, {
    model: settings.model,
    temperature: 0,
    signal,
    messages: [
      {
        role: 'system',
        content:
          'Answer the question from the passages below only. Cite the passages you use by their id in square brackets. If they do not hold the answer, say so.\n\n' +
          (passages || '(no passages were found)'),
      },
      { role: 'user', content: query },
    ],
  });
  return result.message.content ?? '';
};

/**
 * What a question gets from a knowledge base: its closest chunks (for an agent's tool, a SQL query of
 * the knowledge base, `POST …/completions`), and an answer a language model grounds in them.
 */
export const knowledgeBaseRetrieval = (
  ctx: AppContext,
  ports: KnowledgeBaseModelPorts,
  load: LoadKnowledgeBase,
  { embed }: KnowledgeBaseEmbedder,
) => {
  /** What a search of `query` needs: the knowledge base, the question's embedding and terms. */
  const searchPlan = async (
    projectName: string,
    name: string,
    query: string | null,
    signal?: AbortSignal,
  ) => {
    const { kb } = await load(projectName, name);
    const settings = settingsOf(kb);
    const row = (await ctx.duck.query('SELECT DIMENSIONS FROM knowledge_bases WHERE ID = ?', [kb.id])) as {
      DIMENSIONS: number | null;
    }[];
    const dimensions = row[0]?.DIMENSIONS ?? null;
    const metadataColumns = kb.metadataColumns;
    if (query === null || dimensions === null)
      return { kb, dimensions, vector: null, metadataColumns, alpha: settings.alpha };
    const embedded = await embed(kb, [query], signal);
    if (embedded.dimensions !== dimensions)
      throw invalid(
        `The embedding model now answers ${embedded.dimensions} dimensions; the knowledge base holds ${dimensions}`,
        'Embedding model changed',
      );
    return { kb, dimensions, vector: embedded.vectors[0]!, metadataColumns, alpha: settings.alpha };
  };

  /** The `limit` chunks most relevant to `query` (an agent's kb_query_tool, `POST …/completions`). */
  const search = async (
    projectName: string,
    name: string,
    query: string,
    limit: number,
    signal?: AbortSignal,
  ) => {
    const plan = await searchPlan(projectName, name, query, signal);
    if (plan.vector === null || plan.dimensions === null) return [];
    return searchKnowledgeBase(
      ctx.duck,
      {
        kbId: plan.kb.id,
        dimensions: plan.dimensions,
        vector: plan.vector,
        query,
        alpha: plan.alpha,
        metadataColumns: [],
      },
      limit,
    );
  };

  return {
    /** A knowledge base queried as a SQL table: what its search view needs. */
    source: async (projectName: string, name: string, question: string | null, signal?: AbortSignal) => {
      const plan = await searchPlan(projectName, name, question, signal);
      return {
        kbId: plan.kb.id,
        dimensions: plan.dimensions,
        vector: plan.vector,
        alpha: plan.alpha,
        metadataColumns: plan.metadataColumns,
      };
    },

    search,

    /**
     * `POST …/knowledge_bases/{kb}/completions`: the passages closest to `query` (`type: context`),
     * or an answer from a language model grounded in them (`type: chat`), citing their chunk ids.
     */
    completions: async (
      projectName: string,
      name: string,
      request: {
        query: string;
        type: 'context' | 'chat';
        limit: number;
        llm_model?: Record<string, unknown>;
      },
      signal?: AbortSignal,
    ) => {
      const hits = await search(projectName, name, request.query, request.limit, signal);
      const documents = hits.map((h) => ({
        id: h.id,
        chunk_id: h.chunkId,
        chunk_content: h.content,
        metadata: h.metadata,
        distance: h.distance,
        relevance: h.relevance,
      }));
      if (request.type === 'context') return { documents };
      const content = await groundedAnswer(ports, request.llm_model ?? {}, request.query, documents, signal);
      return { message: { role: 'assistant' as const, content, context: documents } };
    },
  };
};
