import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { KnowledgeBaseDocumentsDeleted, KnowledgeBaseDocumentsInserted } from '../../events';
import { settled, type AppContext } from '../context';
import type { Aggregate } from '../eventlog/commands';
import { HASHING_DIMENSIONS, HASHING_PROVIDER, hashingEmbed } from '../kb/hashingEmbedder';
import { createLlmClient, resolveLlmSettings, type LlmDefaults, type LlmEngineResolver } from '../llm';
import { projectAggregate } from '../projects/aggregate';
import type { ProjectDirectory } from '../projects/directory';
import { projectStream } from '../projects/state';
import { badGateway, invalid } from '../shared/errors';
import { quoteMysqlIdent } from '../shared/quoting';
import type { Unstamped } from '../shared/params';
import type { BlobStore } from '../storage/blobs';
import { decideKnowledgeBase, type KnowledgeBaseCommand } from './decider';
import { presentKnowledgeBase } from './present';
import { chunksOf, contentCounts, knowledgeBaseRowsOfProject, type KbDocument } from './projection';
import { searchKnowledgeBase, type KbSearchHit } from './search';
import { documentsStream, requireKnowledgeBase, settingsOf, type KnowledgeBase } from './state';

export type KnowledgeBasePorts = {
  readonly engines: LlmEngineResolver;
  readonly defaults: LlmDefaults;
  readonly requestTimeoutMs: number;
  /** The rows a query answers, run as `POST /api/sql/query` would in `database` (no row cut). */
  readonly rowsOf: (database: string, query: string) => Promise<Record<string, unknown>[]>;
};

/** A knowledge base's documents stream: facts appended in order, nothing to decide on. */
const documentsAggregate: Aggregate<null> = { initialState: () => null, evolve: () => null };

const isBuiltInModel = (model: Record<string, unknown>) => {
  const provider = String(model.provider ?? HASHING_PROVIDER).toLowerCase();
  return provider === HASHING_PROVIDER;
};

const text = (v: unknown) =>
  v === null || v === undefined
    ? ''
    : typeof v === 'string'
      ? v
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

/**
 * Knowledge bases: defined in the project's stream, their documents on their own streams (as
 * content-addressed blobs), their chunks, vectors and terms in DuckDB, searched by vector and keyword.
 */
export const knowledgeBasesService = (
  ctx: AppContext,
  projects: ProjectDirectory,
  blobs: BlobStore,
  ports: KnowledgeBasePorts,
) => {
  const tempDir = path.join(ctx.config.dataDir, 'files', 'incoming');

  const load = async (projectName: string, name: string) => {
    const project = await projects.require(projectName);
    const { state } = await ctx.commands.load(projectStream(project.name), projectAggregate);
    return { project, kb: requireKnowledgeBase(state.knowledgeBases, name) };
  };

  const run = async (projectName: string, unstamped: Unstamped<KnowledgeBaseCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as KnowledgeBaseCommand;
    const project = await projects.require(projectName);
    const outcome = await ctx.commands.run(projectStream(project.name), projectAggregate, (s) =>
      decideKnowledgeBase(command, s),
    );
    await settled(ctx, outcome.lastPosition);
    return project;
  };

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

  /** Bytes stored content-addressed (locally, and in PostgreSQL when the log is there). */
  const store = async (bytes: Buffer | string, format: string) => {
    fs.mkdirSync(tempDir, { recursive: true });
    const temp = path.join(tempDir, `${crypto.randomUUID()}.${format}`);
    await fs.promises.writeFile(temp, bytes);
    try {
      const digest = crypto.createHash('sha256').update(bytes).digest('hex');
      await blobs.put(temp, digest, format);
      return digest;
    } finally {
      await fs.promises.rm(temp, { force: true });
    }
  };

  /** Rows → documents: the id column (or a digest of the content), the content columns, the metadata. */
  const documentsOf = (kb: KnowledgeBase, rows: readonly Record<string, unknown>[]): KbDocument[] => {
    if (rows.length === 0) return [];
    const columns = Object.keys(rows[0]!);
    const missing = kb.contentColumns.filter(
      (c) => !columns.some((k) => k.toLowerCase() === c.toLowerCase()),
    );
    if (missing.length === kb.contentColumns.length)
      throw invalid(
        `The rows have no content column ${kb.contentColumns.join(', ')} (their columns: ${columns.join(', ')}); name it in content_columns`,
        'Invalid documents',
      );
    const get = (row: Record<string, unknown>, column: string) =>
      row[Object.keys(row).find((k) => k.toLowerCase() === column.toLowerCase()) ?? column];
    const skip = new Set([kb.idColumn, ...kb.contentColumns].map((c) => c.toLowerCase()));
    return rows.flatMap((row) => {
      const content = kb.contentColumns
        .map((c) => text(get(row, c)))
        .filter((t) => t.trim() !== '')
        .join('\n\n');
      if (content === '') return [];
      const rawId = get(row, kb.idColumn);
      const id =
        rawId === null || rawId === undefined
          ? crypto.createHash('sha256').update(content).digest('hex').slice(0, 16)
          : text(rawId);
      const metadataColumns =
        kb.metadataColumns ?? Object.keys(row).filter((k) => !skip.has(k.toLowerCase()));
      const metadata = Object.fromEntries(metadataColumns.map((c) => [c, get(row, c) ?? null]));
      return [{ id, content, metadata }];
    });
  };

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

  const deleteDocuments = async (projectName: string, name: string, ids: readonly string[]) => {
    const { kb } = await load(projectName, name);
    if (ids.length === 0) return;
    const event: KnowledgeBaseDocumentsDeleted = {
      type: 'KnowledgeBaseDocumentsDeleted',
      data: { kbId: Number(kb.id), ids: [...new Set(ids)], deletedAt: ctx.clock().toISOString() },
    };
    const outcome = await ctx.commands.run(documentsStream(kb.id), documentsAggregate, () => [event]);
    await settled(ctx, outcome.lastPosition);
  };

  const get = async (projectName: string, name: string) => {
    const { project, kb } = await load(projectName, name);
    const row = (await knowledgeBaseRowsOfProject(ctx.duck, project.id)).find((r) => r.ID === kb.id);
    if (!row) throw new Error(`knowledge base ${kb.name} is in the log but not in the read model`);
    return presentKnowledgeBase(row, await contentCounts(ctx.duck, kb.id));
  };

  /**
   * Inserts documents: recorded as one event (documents and any provider vectors stored as blobs
   * first), then cut, embedded and indexed by the projection. A document whose id exists is replaced.
   */
  const insert = async (
    projectName: string,
    name: string,
    rows: readonly Record<string, unknown>[],
    signal?: AbortSignal,
  ) => {
    const { project, kb } = await load(projectName, name);
    const documents = documentsOf(kb, rows);
    if (documents.length === 0) return { documents: 0, chunks: 0 };
    const { chunkSize, chunkOverlap } = settingsOf(kb);
    const chunking = { chunkSize, chunkOverlap };
    const chunks = chunksOf(documents, chunking);
    const documentsDigest = await store(documents.map((d) => JSON.stringify(d)).join('\n') + '\n', 'jsonl');
    const embedded = isBuiltInModel(kb.embeddingModel)
      ? { kind: 'hashing' as const, dimensions: Number(kb.embeddingModel.dimensions ?? HASHING_DIMENSIONS) }
      : await (async () => {
          const e = await embed(
            kb,
            chunks.map((c) => c.content),
            signal,
          );
          if (e.kind !== 'stored') throw new Error('a provider model answered as the built-in one');
          const bytes = Buffer.alloc(e.vectors.length * e.dimensions * 4);
          e.vectors.forEach((v, i) =>
            Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(bytes, i * e.dimensions * 4),
          );
          return {
            kind: 'stored' as const,
            dimensions: e.dimensions,
            vectorsDigest: await store(bytes, 'f32'),
            provider: e.provider,
            model: e.model,
          };
        })();
    const event: KnowledgeBaseDocumentsInserted = {
      type: 'KnowledgeBaseDocumentsInserted',
      data: {
        kbId: Number(kb.id),
        project: project.name,
        name: kb.name,
        documentsDigest,
        documents: documents.length,
        chunks: chunks.length,
        chunking,
        embedding: embedded,
        insertedAt: ctx.clock().toISOString(),
      },
    };
    const outcome = await ctx.commands.run(documentsStream(kb.id), documentsAggregate, () => [event]);
    await settled(ctx, outcome.lastPosition);
    return { documents: documents.length, chunks: chunks.length };
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
    /** Creates a knowledge base (its embedding model checked first: provider known, key available). */
    create: async (
      projectName: string,
      input: Extract<KnowledgeBaseCommand, { type: 'CreateKnowledgeBase' }>['data'],
    ) => {
      if (!isBuiltInModel(input.embeddingModel)) await providerSettings(input.embeddingModel);
      await run(projectName, { type: 'CreateKnowledgeBase', data: input });
      return get(projectName, input.name);
    },

    remove: async (projectName: string, name: string, ifExists: boolean) => {
      await run(projectName, { type: 'DeleteKnowledgeBase', data: { name, ifExists } });
    },

    list: async (projectName: string) => {
      const project = await projects.require(projectName);
      const rows = await knowledgeBaseRowsOfProject(ctx.duck, project.id);
      return Promise.all(rows.map(async (r) => presentKnowledgeBase(r, await contentCounts(ctx.duck, r.ID))));
    },

    get,

    insert,
    /** Inserts the rows a query answers (`INSERT INTO kb SELECT …`, `PUT` with `query` or `files`). */
    insertQuery: async (
      projectName: string,
      name: string,
      database: string,
      query: string,
      signal?: AbortSignal,
    ) => {
      await load(projectName, name);
      const rows = await ports.rowsOf(database, query);
      return insert(projectName, name, rows, signal);
    },

    deleteDocuments,

    /**
     * `DELETE FROM kb WHERE …`: the documents with a chunk the condition matches (over the columns a
     * query of the knowledge base sees: id, chunk_id, chunk_content, metadata fields), all of them
     * without a condition. Returns how many documents were deleted.
     */
    deleteWhere: async (projectName: string, name: string, database: string, where: string | null) => {
      const { project, kb } = await load(projectName, name);
      const table = `${quoteMysqlIdent(project.name)}.${quoteMysqlIdent(kb.name)}`;
      const rows = await ports.rowsOf(
        database,
        `SELECT DISTINCT id FROM ${table}${where === null ? '' : ` WHERE ${where}`}`,
      );
      const ids = rows.map((r) => String(r.id));
      await deleteDocuments(projectName, name, ids);
      return ids.length;
    },

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
      const llm = request.llm_model ?? {};
      const settings = await resolveLlmSettings(
        {
          modelName: typeof llm.model_name === 'string' ? llm.model_name : null,
          provider: typeof llm.provider === 'string' ? llm.provider : 'openai',
          params: llm,
        },
        { defaults: ports.defaults, engines: ports.engines },
      ).catch((error: unknown) => {
        throw invalid((error as Error).message, 'Invalid llm_model');
      });
      const client = createLlmClient(settings, { requestTimeoutMs: ports.requestTimeoutMs });
      const passages = documents.map((d) => `[${d.chunk_id}]\n${d.chunk_content}`).join('\n\n');
      const result = await client
        .chat({
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
            { role: 'user', content: request.query },
          ],
        })
        .catch((error: unknown) => {
          throw badGateway(`The language model failed: ${(error as Error).message}`, 'Language model error');
        });
      return {
        message: { role: 'assistant' as const, content: result.message.content ?? '', context: documents },
      };
    },

    exists: async (projectName: string, name: string) => {
      const project = await projects.find(projectName);
      if (!project) return undefined;
      const { state } = await ctx.commands.load(projectStream(project.name), projectAggregate);
      const kb = [...state.knowledgeBases.values()].find((k) => k.name.toLowerCase() === name.toLowerCase());
      return kb ? { project: project.name, name: kb.name } : undefined;
    },
  };
};

export type KnowledgeBasesService = ReturnType<typeof knowledgeBasesService>;
export type { KbSearchHit };
