import { z } from 'zod';
import { HASHING_DIMENSIONS, HASHING_MODEL, HASHING_PROVIDER } from '../engines/search/hashingEmbedder';
import { invalid } from '../shared/errors';
import { looseName, params } from '../shared/resourceSchemas';
import type { KnowledgeBaseCommand } from './decider';

export const knowledgeBasesPath = z.object({ project: z.string().min(1) });
export const knowledgeBasePath = z.object({ project: z.string().min(1), knowledge_base: z.string().min(1) });

const columnList = z.array(z.string().min(1).max(256)).max(1000);

/** MindsDB's knowledge base fields, as `POST …/knowledge_bases` and `CREATE KNOWLEDGE_BASE … USING` take them. */
const definitionFields = {
  embedding_model: params.nullable().optional(),
  reranking_model: z.union([params, z.literal(false), z.null()]).optional(),
  storage: z.unknown().optional(),
  /** The JS SDK's `MODEL = project.model`: an embedding model made with CREATE MODEL. */
  model: z.unknown().optional(),
  content_columns: columnList.min(1).optional(),
  metadata_columns: columnList.optional(),
  id_column: z.string().min(1).max(256).optional(),
  params: params.optional(),
  preprocessing: params.optional(),
};

export const createKnowledgeBaseBody = z.object({
  knowledge_base: z
    .object(
      { name: looseName('knowledge base'), ...definitionFields },
      { error: 'Must provide "knowledge_base" parameter in POST body' },
    )
    .catchall(z.unknown()),
});

/** `PUT …/knowledge_bases/{kb}`: documents to insert, as rows, a query's rows, or uploaded files. */
export const insertKnowledgeBaseBody = z.object({
  knowledge_base: z
    .object(
      {
        rows: z.array(z.record(z.string(), z.unknown())).max(100_000).optional(),
        query: z.string().min(1).optional(),
        files: z.array(z.string().min(1)).max(100).optional(),
        urls: z.array(z.string()).optional(),
        crawl_depth: z.number().optional(),
        filters: z.array(z.string()).nullable().optional(),
      },
      { error: 'Must provide "knowledge_base" parameter in PUT body' },
    )
    .strict(),
});

export const completionsBody = z.object({
  // As SQL's search refuses it (src/sql/knowledgeBaseTables.ts): a blank question has no meaning to search for.
  query: z.string().refine((q) => q.trim() !== '', 'query must not be blank'),
  type: z.enum(['context', 'chat']).default('context'),
  limit: z.number().int().min(1).max(100).default(10),
  llm_model: params.optional(),
});

const MIN_DIMENSIONS = 8;
const MAX_DIMENSIONS = 4096;

type KnowledgeBaseDefinition = Omit<
  Extract<KnowledgeBaseCommand, { type: 'CreateKnowledgeBase' }>['data'],
  'ifNotExists'
>;

/**
 * A definition in MindsDB's shape → the command's fields, with MindsDB's defaults (content column
 * `content`, id column `id`, metadata: every other column). What this service cannot honour is
 * refused by name rather than ignored: a named storage (chunks live in the read model), rerankers,
 * embedding models made with CREATE MODEL.
 */
export const knowledgeBaseDefinition = (
  name: string,
  raw: Record<string, unknown>,
): KnowledgeBaseDefinition => {
  const parsed = z.object(definitionFields).catchall(z.unknown()).safeParse(raw);
  if (!parsed.success)
    throw invalid(
      parsed.error.issues.map((i) => `${i.path.join('.') || 'knowledge_base'}: ${i.message}`).join('; '),
      'Invalid knowledge base',
    );
  const {
    embedding_model,
    reranking_model,
    storage,
    model,
    content_columns,
    metadata_columns,
    id_column,
    params: given,
    preprocessing,
    ...rest
  } = parsed.data;
  if (storage !== undefined && storage !== null)
    throw invalid(
      'storage: chunks and vectors are kept in this service (DuckDB, rebuilt from the log); a vector database cannot be named',
      'Unsupported knowledge base option',
    );
  if (model !== undefined && model !== null)
    throw invalid(
      'model: embedding models made with CREATE MODEL are not supported; give embedding_model = {"provider": …, "model_name": …}',
      'Unsupported knowledge base option',
    );
  if (reranking_model !== undefined && reranking_model !== null && reranking_model !== false)
    throw invalid(
      'reranking_model: reranking is not available; leave it out or set it to false (hybrid search orders by relevance)',
      'Unsupported knowledge base option',
    );
  const embeddingModel = embedding_model ?? {
    provider: HASHING_PROVIDER,
    model_name: HASHING_MODEL,
  };
  if (typeof embeddingModel.provider !== 'string' || embeddingModel.provider.trim() === '')
    throw invalid(
      'embedding_model.provider must name a provider (e.g. "openai", or "mindledger" for the built-in model)',
      'Invalid knowledge base',
    );
  if (String(embeddingModel.provider).toLowerCase() === HASHING_PROVIDER) {
    const dimensions = Number(embeddingModel.dimensions ?? HASHING_DIMENSIONS);
    if (!Number.isInteger(dimensions) || dimensions < MIN_DIMENSIONS || dimensions > MAX_DIMENSIONS)
      throw invalid(
        `embedding_model.dimensions must be an integer from ${MIN_DIMENSIONS} to ${MAX_DIMENSIONS}`,
        'Invalid knowledge base',
      );
  }
  const contentColumns = content_columns ?? ['content'];
  const idColumn = id_column ?? 'id';
  return {
    name,
    embeddingModel,
    contentColumns,
    metadataColumns: metadata_columns ?? null,
    idColumn,
    params: { ...(given ?? {}), ...rest, ...(preprocessing ? { preprocessing } : {}) },
  };
};

/** A knowledge base as MindsDB's `as_dict` shows it, and what it holds. */
export const knowledgeBaseView = z.object({
  id: z.number(),
  name: z.string(),
  project_id: z.number(),
  embedding_model: z.unknown(),
  reranking_model: z.null(),
  vector_database: z.null(),
  vector_database_table: z.null(),
  storage: z.null(),
  metadata_columns: z.array(z.string()).nullable(),
  content_columns: z.array(z.string()),
  id_column: z.string(),
  params: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
  dimensions: z.number().nullable(),
  documents: z.number(),
  chunks: z.number(),
});

const hit = z.object({
  id: z.string(),
  chunk_id: z.string(),
  chunk_content: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  distance: z.number(),
  relevance: z.number(),
});

export const completionsView = z.union([
  z.object({ documents: z.array(hit) }),
  z.object({
    message: z.object({ role: z.literal('assistant'), content: z.string(), context: z.array(hit) }),
  }),
]);
