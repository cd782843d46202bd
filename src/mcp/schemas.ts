import { z } from 'zod';

/**
 * The tools' arguments: one zod schema each, which validates a call and is the JSON schema
 * `tools/list` shows the assistant (z.toJSONSchema). Names and texts are bounded here; SQL text is
 * bounded by the SQL interface (SQL_MAX_QUERY_BYTES), as on every door.
 */
const name = (what: string) => z.string().min(1).max(256).describe(what);
const project = name(
  'The project (a database of type project). Default: mindsdb, or the project your token is scoped to.',
);
const scalar = z.union([z.string().max(65_536), z.number(), z.boolean(), z.null()]);

export const queryArgs = z.object({
  query: z
    .string()
    .describe('One SQL statement, in the MySQL dialect MindsDB speaks (see the write_sql prompt).'),
  context: z
    .object({ db: z.string().max(256).optional().describe('The database unqualified names are read in.') })
    .catchall(z.unknown())
    .nullish()
    .describe('MindsDB\'s query context, e.g. {"db": "my_project"}: the default database.'),
});

export const listDatabasesArgs = z.object({});

export const listTablesArgs = z.object({ database: name('A database, as list_databases names it.') });

export const describeTableArgs = z.object({
  database: name(
    "The database the table is in. Default: the one table names (database.table), else mindsdb or your token's project.",
  ).optional(),
  table: name('The table, view, knowledge base or model, as list_tables names it, or as database.table.'),
});

const FILTER_OPERATORS = ['=', '!=', '<', '<=', '>', '>=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN'] as const;

export const searchKnowledgeBaseArgs = z.object({
  project: project.optional(),
  knowledge_base: name('The knowledge base, in the project, or as project.knowledge_base.'),
  query: z.string().min(1).max(8_000).describe('What to search for (hybrid: meaning and keywords).'),
  filters: z
    .array(
      z.object({
        column: name('A metadata column of the knowledge base (or id, chunk_content, relevance).'),
        op: z.enum(FILTER_OPERATORS).default('='),
        value: z.union([scalar, z.array(z.union([z.string().max(65_536), z.number()])).max(1_000)]),
      }),
    )
    .max(32)
    .optional()
    .describe('Conditions on metadata, ANDed, as a WHERE clause of SQL would hold them.'),
  relevance_threshold: z.number().min(0).max(1).optional().describe('Only chunks at least this relevant.'),
  hybrid_search_alpha: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(
      "Weight of meaning against keywords: 1 vector only, 0 keyword only (default: the knowledge base's).",
    ),
  limit: z.number().int().min(1).max(100).default(10).describe('Most chunks to return.'),
});

export const askAgentArgs = z.object({
  project: project.optional(),
  agent: name('The agent, in the project, or as project.agent.'),
  question: z.string().min(1).max(32_000).describe('The question, as a user would ask it.'),
});

export const predictArgs = z.object({
  project: project.optional(),
  model: name('The model, in the project, or as project.model.'),
  inputs: z
    .record(z.string().min(1).max(256), scalar)
    .describe('The feature values of one row, by column name, e.g. {"sqft": 823, "location": "good"}.'),
});

export const verifyCallArgs = z.object({
  position: z.number().int().min(1).describe("The call's log position, from its result's _meta."),
  answer_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe(
      'The SHA-256 of the answer you hold (canonical JSON without _meta): checked against the record.',
    ),
});
