import type { AppContext } from '../context';
import { loadProject, projectCommand, type RemoveByName } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { projectStream } from '../shared/projectState';
import { quoteMysqlIdent } from '../shared/quoting';
import type { Unstamped } from '../shared/params';
import type { BlobStore } from '../storage/blobs';
import { decideKnowledgeBase, type KnowledgeBaseCommand } from './decider';
import { knowledgeBaseDocuments } from './documents';
import { isBuiltInModel, knowledgeBaseEmbedder, type KnowledgeBaseModelPorts } from './embedding';
import { knowledgeBaseEvaluation, type EvaluationPorts } from './evaluation';
import { knowledgeBaseLookup } from './lookup';
import { presentKnowledgeBase } from './present';
import { contentCounts, knowledgeBaseRow, knowledgeBaseRowsOfProject } from './projection';
import { knowledgeBaseRetrieval } from './retrieval';

/**
 * A query whose rows become documents. `columns` (an INSERT's column list) names its first columns
 * in order, after it ran: put around the text, as `SELECT * FROM (…) AS t(a, b)`, the names were
 * sent with it to the database it reads whole, and MariaDB has no such syntax.
 */
export type RowsQuery = { readonly sql: string; readonly columns?: readonly string[] };

type KnowledgeBasePorts = KnowledgeBaseModelPorts &
  EvaluationPorts & {
    /** The rows a query answers, run as `POST /api/sql/query` would in `database` (no row cut). */
    readonly rowsOf: (database: string, query: RowsQuery) => Promise<Record<string, unknown>[]>;
  };

/** The writes whose rows a query answers (`INSERT INTO kb SELECT …`, `DELETE FROM kb WHERE …`). */
const queryWrites = (
  ports: KnowledgeBasePorts,
  load: ReturnType<typeof knowledgeBaseLookup>,
  { insert, deleteDocuments }: ReturnType<typeof knowledgeBaseDocuments>,
) => ({
  /** Inserts the rows a query answers (`INSERT INTO kb SELECT …`, `PUT` with `query` or `files`). */
  insertQuery: async (
    projectName: string,
    name: string,
    database: string,
    query: RowsQuery,
    signal?: AbortSignal,
  ) => {
    await load(projectName, name);
    const rows = await ports.rowsOf(database, query);
    return insert(projectName, name, rows, signal);
  },

  /**
   * `DELETE FROM kb WHERE …`: the documents with a chunk the condition matches (over the columns a
   * query of the knowledge base sees: id, chunk_id, chunk_content, metadata fields), all of them
   * without a condition. Returns how many documents were deleted.
   */
  deleteWhere: async (projectName: string, name: string, database: string, where: string | null) => {
    const { project, kb } = await load(projectName, name);
    const table = `${quoteMysqlIdent(project.name)}.${quoteMysqlIdent(kb.name)}`;
    const rows = await ports.rowsOf(database, {
      sql: `SELECT DISTINCT id FROM ${table}${where === null ? '' : ` WHERE ${where}`}`,
    });
    const ids = rows.map((r) => String(r.id));
    await deleteDocuments(projectName, name, ids);
    return ids.length;
  },
});

/**
 * Knowledge bases: defined in the project's stream, their documents on their own streams (as
 * content-addressed blobs), their chunks, vectors and terms in DuckDB, searched by vector and keyword.
 * The definitions live here; documents (documents.ts) and what a question retrieves (retrieval.ts)
 * are their own modules, sharing the lookup and the embedding model.
 */
export const knowledgeBasesService = (
  ctx: AppContext,
  projects: ProjectDirectory,
  blobs: BlobStore,
  ports: KnowledgeBasePorts,
) => {
  const load = knowledgeBaseLookup(ctx, projects);
  const embedder = knowledgeBaseEmbedder(ports);
  const documents = knowledgeBaseDocuments(ctx, blobs, load, embedder);
  const { insert, deleteDocuments, index } = documents;
  const { source, search, completions } = knowledgeBaseRetrieval(ctx, ports, load, embedder);
  const evaluations = knowledgeBaseEvaluation(ctx, ports, load, embedder);

  const run = (projectName: string, command: Unstamped<KnowledgeBaseCommand>) =>
    projectCommand(ctx, {
      project: projectName,
      projects,
      command,
      decide: decideKnowledgeBase,
      answer: 'settled',
    });

  const get = async (projectName: string, name: string) => {
    const { kb } = await load(projectName, name);
    const row = await knowledgeBaseRow(ctx.duck, kb.id);
    if (!row) throw new Error(`knowledge base ${kb.name} is in the log but not in the read model`);
    return presentKnowledgeBase(row, await contentCounts(ctx.duck, kb.id));
  };

  return {
    /** Creates a knowledge base (its embedding model checked first: provider known, key available). */
    create: async (
      projectName: string,
      input: Extract<KnowledgeBaseCommand, { type: 'CreateKnowledgeBase' }>['data'],
    ) => {
      if (!isBuiltInModel(input.embeddingModel)) await embedder.providerSettings(input.embeddingModel);
      await run(projectName, { type: 'CreateKnowledgeBase', data: input });
      return get(projectName, input.name);
    },

    /** `forget`: its secrets (the embedding model's API key) are forgotten too (crypto-shredding). */
    remove: (async (projectName, name, ifExists, options = {}) => {
      const { project } = await run(projectName, { type: 'DeleteKnowledgeBase', data: { name, ifExists } });
      if (options.forget)
        await ctx.secrets.forget(
          { stream: projectStream(project), eventType: 'KnowledgeBaseCreated', name },
          `knowledge base ${name} of ${project} deleted with forget`,
        );
    }) satisfies RemoveByName,

    list: async (projectName: string) => {
      const project = await projects.require(projectName);
      const rows = await knowledgeBaseRowsOfProject(ctx.duck, project.id);
      return Promise.all(rows.map(async (r) => presentKnowledgeBase(r, await contentCounts(ctx.duck, r.ID))));
    },

    get,

    insert,
    ...queryWrites(ports, load, documents),
    deleteDocuments,
    /** `CREATE INDEX ON KNOWLEDGE_BASE`: its postings compacted into term-id order. */
    index,

    source,

    search,

    completions,

    /** `EVALUATE KNOWLEDGE_BASE`: retrieval scored on a test set, recorded on the knowledge base's stream. */
    evaluate: evaluations.evaluate,
    /** The knowledge base's evaluations, newest first. */
    evaluations: evaluations.list,

    exists: async (projectName: string, name: string) => {
      const project = await projects.find(projectName);
      if (!project) return undefined;
      const state = await loadProject(ctx, projects, project.name);
      const kb = [...state.knowledgeBases.values()].find((k) => k.name.toLowerCase() === name.toLowerCase());
      return kb ? { project: project.name, name: kb.name } : undefined;
    },
  };
};

export type KnowledgeBasesService = ReturnType<typeof knowledgeBasesService>;
