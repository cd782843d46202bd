import { z } from 'zod';
import { stepText } from '../engines/agentLoop';
import { isDomainError } from '../shared/errors';
import { quoteMysqlIdent, quoteString } from '../shared/quoting';
import { AgentAskFailed, type McpPorts, type McpSqlAnswer } from './ports';
import {
  capTable,
  errorAnswer,
  objectAnswer,
  tableText,
  untrustedObjectAnswer,
  type Caps,
  type ToolAnswer,
} from './present';
import { askRefusal, defaultProject, projectRef } from './rules';
import {
  askAgentArgs,
  describeTableArgs,
  listDatabasesArgs,
  listTablesArgs,
  predictArgs,
  queryArgs,
  searchKnowledgeBaseArgs,
  verifyCallArgs,
} from './schemas';
import type { Caller, Completed, McpCalls } from './service';

/** MySQL's "access denied" (ER_SPECIFIC_ACCESS_DENIED_ERROR): what every SQL door answers a refusal with. */
const ACCESS_DENIED = 1227;

/** What a tool is given besides its arguments. */
type ToolContext = {
  readonly caller: Caller;
  readonly signal: AbortSignal;
  /** Tells the client how far a long call is (MCP progress notifications), when it asked to be told. */
  readonly progress: (progress: number, message: string) => void;
};

/** What a tool did: its answer, and what its record says (a call's record without the result). */
export type ToolDone = Omit<Completed, 'result'> & { readonly answer: ToolAnswer };

type ToolAnnotations = {
  readonly title: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
};

export type Tool<S extends z.ZodType = z.ZodType> = {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  readonly output?: z.ZodType;
  readonly annotations: ToolAnnotations;
  readonly run: (args: z.output<S>, context: ToolContext) => Promise<ToolDone>;
  /**
   * A mutating tool's form on a read-only connection (`read_only=true`: its caller narrowed to reads
   * only, src/mcp/switches.ts): what it is then, hints and description saying so. A mutating tool
   * without one is withheld there.
   */
  readonly readOnlyForm?: () => Tool;
};

/** Arguments a tool's `input` refuses: the server answers them as the tool's error, recorded as invalid. */
export class InvalidToolArguments extends Error {}

/**
 * A tool as the server holds it, its arguments unknown: validating them against `input` here, once,
 * is what hands the typed `run` its typed arguments.
 */
const tool = <S extends z.ZodType>(definition: Tool<S>): Tool => ({
  ...definition,
  run: async (args, context) => {
    const parsed = definition.input.safeParse(args);
    if (!parsed.success)
      throw new InvalidToolArguments(
        `Invalid arguments for ${definition.name}: ${z.prettifyError(parsed.error)}`,
      );
    return definition.run(parsed.data, context);
  },
});

const done = (answer: ToolAnswer, more: Partial<Omit<ToolDone, 'answer'>> = {}): ToolDone => ({
  answer,
  outcome: answer.isError ? 'error' : 'ok',
  error: null,
  project: null,
  rowCount: null,
  truncated: false,
  traceId: null,
  ...more,
});

/** A refusal: the same words the SQL doors use (error 1227), recorded as refused. */
const refused = (message: string, project: string | null): ToolDone =>
  done(errorAnswer(message, ACCESS_DENIED), { outcome: 'refused', error: message, project });

const failed = (message: string, project: string | null, code: number | null = null): ToolDone =>
  done(errorAnswer(message, code), { outcome: 'error', error: message, project });

/** Arguments that name nothing (a name's project and `project` disagree): the tool's error, recorded as invalid. */
const invalid = (message: string, project: string | null): ToolDone =>
  done(errorAnswer(message), { outcome: 'invalid', error: message, project });

/**
 * A SQL answer as a tool's: rows as structured content and as a table in text (marked as untrusted
 * data, `what` naming it), within the caps.
 */
const sqlDone = (
  answer: McpSqlAnswer,
  caps: Caps,
  project: string | null,
  what = 'the answer of a SQL query',
): ToolDone => {
  switch (answer.type) {
    case 'error':
      return answer.error_code === ACCESS_DENIED
        ? refused(answer.error_message, project)
        : failed(answer.error_message, project, answer.error_code);
    case 'ok':
      return done(
        {
          content: [
            {
              type: 'text',
              text: `OK${answer.affected_rows === null || answer.affected_rows === undefined ? '' : ` (${answer.affected_rows} rows affected)`}`,
            },
          ],
          structuredContent: { type: 'ok', affected_rows: answer.affected_rows ?? null },
          isError: false,
        },
        { project, rowCount: answer.affected_rows ?? null },
      );
    case 'table': {
      const table = capTable(answer, caps);
      return done(
        {
          content: [{ type: 'text', text: tableText(table, caps, what) }],
          structuredContent: {
            type: 'table',
            column_names: [...table.columns],
            column_types: [...table.types],
            data: table.rows.map((r) => [...r]),
            row_count: table.rows.length,
            truncated: table.truncated,
          },
          isError: false,
        },
        { project, rowCount: table.rows.length, truncated: table.truncated },
      );
    }
    default: {
      const _exhaustive: never = answer;
      return _exhaustive;
    }
  }
};

const tableOutput = z.object({
  type: z.enum(['table', 'ok', 'error']),
  column_names: z.array(z.string()).optional(),
  column_types: z.array(z.string()).optional(),
  data: z.array(z.array(z.unknown())).optional(),
  row_count: z.number().int().optional(),
  truncated: z.boolean().optional(),
  affected_rows: z.number().int().nullable().optional(),
  error_code: z.number().int().nullable().optional(),
  error_message: z.string().optional(),
});

const name = quoteMysqlIdent;
const qualified = (database: string, table: string) => `${name(database)}.${name(table)}`;

const READ_ONLY: Omit<ToolAnnotations, 'title'> = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** What every tool is built from: the service's ports, the call records and the answer caps. */
type ToolKit = {
  readonly ports: McpPorts;
  readonly calls: McpCalls;
  readonly caps: Caps;
  readonly sql: (
    query: string,
    db: string,
    signal: AbortSignal,
    params?: Record<string, unknown>,
  ) => Promise<McpSqlAnswer>;
};

/** `query`, with its read-only form for a read-only connection. */
const queryTool = ({ sql, caps }: ToolKit): Tool => {
  const queryTool: Tool = tool({
    name: 'query',
    description: [
      'Run one SQL statement against this MindsDB-compatible service and get its answer.',
      'The dialect is MindsDB SQL (MySQL syntax): name tables as `database`.`table`, or set context.db.',
      'Reads (SELECT, SHOW, DESCRIBE) answer {"type": "table", "column_names", "column_types", "data", "row_count", "truncated"};',
      'other statements (CREATE, INSERT, DROP, …) answer {"type": "ok"}; a failure {"type": "error", "error_code", "error_message"}.',
      `At most ${caps.maxRows} rows come back (truncated: true says more were cut): add LIMIT or aggregate.`,
      "What may run is your role's: an analyst token runs read-only statements; writes are refused with error 1227.",
      'Read the write_sql prompt for the dialect.',
    ].join(' '),
    input: queryArgs,
    output: tableOutput,
    annotations: {
      title: 'Run SQL',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    run: async (args, { caller, signal }) => {
      const db = args.context?.db ?? defaultProject(caller);
      return sqlDone(await sql(args.query, db, signal), caps, db);
    },
  });
  const readOnlyQuery: Tool = {
    ...queryTool,
    description: `${queryTool.description} This connection is read-only (read_only=true in its URL): only reading statements run (SELECT, SHOW, DESCRIBE, predictions); any write is refused with error 1227.`,
    annotations: { ...queryTool.annotations, readOnlyHint: true, destructiveHint: false },
  };
  return { ...queryTool, readOnlyForm: () => readOnlyQuery };
};

const listDatabasesTool = ({ sql, caps }: ToolKit): Tool =>
  tool({
    name: 'list_databases',
    description:
      'List the databases you can read: projects (their tables, views, models, agents, knowledge bases), files (uploaded tables), integrations (external databases) and information_schema. Answers column Database, TYPE (project, data, system) and ENGINE.',
    input: listDatabasesArgs,
    output: tableOutput,
    annotations: { title: 'List databases', ...READ_ONLY },
    run: async (_args, { signal }) =>
      sqlDone(await sql('SHOW FULL DATABASES', 'mindsdb', signal), caps, null, 'the list of databases'),
  });

/** SHOW FULL TABLES of one database, a project's knowledge bases named as such. */
const listTables = async ({ sql, caps }: ToolKit, database: string, signal: AbortSignal) => {
  const tables = await sql(`SHOW FULL TABLES FROM ${name(database)}`, database, signal);
  if (tables.type !== 'table' || tables.column_names.length < 2)
    return sqlDone(
      tables.type === 'table'
        ? { ...tables, column_names: ['Table', 'Table_type'], data: tables.data.map((r) => [r[0], 'TABLE']) }
        : tables,
      caps,
      database,
      'the list of tables',
    );
  // The catalog's relations (SHOW FULL TABLES reads information_schema.TABLES: models are
  // MODEL there); a project's knowledge bases, which SQL lists as tables, named as such.
  const kbs = await sql(`SELECT NAME FROM ${qualified(database, 'knowledge_bases')}`, database, signal);
  const kbNames = new Set(kbs.type === 'table' ? kbs.data.map((r) => String(r[0]).toLowerCase()) : []);
  const rows = tables.data.map((r) => [
    r[0],
    kbNames.has(String(r[0]).toLowerCase()) && r[1] === 'BASE TABLE' ? 'KNOWLEDGE_BASE' : r[1],
  ]);
  return sqlDone(
    {
      type: 'table',
      column_names: ['Table', 'Table_type'],
      column_types: ['VARCHAR', 'VARCHAR'],
      data: rows,
    },
    caps,
    database,
    'the list of tables',
  );
};

const listTablesTool = (kit: ToolKit): Tool =>
  tool({
    name: 'list_tables',
    description:
      "List the tables of one database: in a project its views, knowledge bases (TYPE KNOWLEDGE_BASE), models (TYPE MODEL) and system tables (models, agents, skills, …); in files the uploads; in an integration its tables. Then describe_table gives a table's columns and types.",
    input: listTablesArgs,
    output: tableOutput,
    annotations: { title: 'List tables', ...READ_ONLY },
    run: (args, { signal }) => listTables(kit, args.database, signal),
  });

const describeTableTool = ({ ports, caps }: ToolKit): Tool =>
  tool({
    name: 'describe_table',
    description:
      "The columns of one table, view, knowledge base or model, with their types (DuckDB type names), as the SQL engine reads it (`database` and `table`, or `table` as `database.table`). A model's columns also have a role: its features (typed as the model typed them when it learnt), its target and its other outputs. Use it before writing a query on a table you have not seen.",
    input: describeTableArgs,
    output: tableOutput,
    annotations: { title: 'Describe a table', ...READ_ONLY },
    run: async (args, { caller, signal }) => {
      const ref = projectRef(args.database, args.table, defaultProject(caller));
      if (typeof ref === 'string') return invalid(ref, args.database ?? null);
      return sqlDone(
        await describeObject(ports, ref.project, ref.name, signal),
        caps,
        ref.project,
        "the table's columns",
      );
    },
  });

type SearchArgs = z.output<typeof searchKnowledgeBaseArgs>;

/**
 * The WHERE conditions of a knowledge-base search and their parameters; a filter whose value does
 * not fit its operator (a list for IN, one value otherwise) is the tool's invalid answer.
 */
const searchConditions = (args: SearchArgs, project: string) => {
  // The search text as a literal: the knowledge base's planner reads `content = '…'` as written.
  const params: Record<string, unknown> = {};
  const conditions = [`content = ${quoteString(args.query)}`];
  for (const [i, f] of (args.filters ?? []).entries()) {
    const key = `mcp_f${i}`;
    params[key] = f.value;
    const many = f.op === 'IN' || f.op === 'NOT IN';
    if (many !== Array.isArray(f.value))
      return done(errorAnswer(`Filter ${i + 1} (${f.op}): ${many ? 'a list' : 'one value'} is needed`), {
        outcome: 'invalid',
        error: `filter ${i + 1}: ${f.op} takes ${many ? 'a list' : 'one value'}`,
        project,
      });
    conditions.push(
      f.value === null
        ? `${name(f.column)} ${f.op === '!=' ? 'IS NOT NULL' : 'IS NULL'}`
        : `${name(f.column)} ${f.op} ${many ? `(:${key})` : `:${key}`}`,
    );
  }
  if (args.relevance_threshold !== undefined)
    conditions.push(`relevance_threshold = ${args.relevance_threshold}`);
  if (args.hybrid_search_alpha !== undefined)
    conditions.push(`hybrid_search_alpha = ${args.hybrid_search_alpha}`);
  return { conditions, params };
};

const searchKnowledgeBaseTool = ({ sql, caps }: ToolKit): Tool =>
  tool({
    name: 'search_knowledge_base',
    description: [
      'Search a knowledge base: hybrid search (meaning and keywords) over its chunks, most relevant first,',
      'as `SELECT … FROM project.kb WHERE content = <query> AND <filters>` does in SQL. Filters are conditions on',
      'its metadata columns (column, op, value; ops = != < <= > >= LIKE, NOT LIKE, IN, NOT IN), ANDed. Answers',
      'rows of id, chunk_id, chunk_content, metadata, distance, relevance.',
    ].join(' '),
    input: searchKnowledgeBaseArgs,
    output: tableOutput,
    annotations: { title: 'Search a knowledge base', ...READ_ONLY },
    run: async (args, { caller, signal }) => {
      const ref = projectRef(args.project, args.knowledge_base, defaultProject(caller));
      if (typeof ref === 'string') return invalid(ref, args.project ?? null);
      const project = ref.project;
      const search = searchConditions(args, project);
      if ('answer' in search) return search;
      return sqlDone(
        await sql(
          `SELECT id, chunk_id, chunk_content, metadata, distance, relevance FROM ${qualified(project, ref.name)} WHERE ${search.conditions.join(' AND ')} LIMIT ${args.limit}`,
          project,
          signal,
          search.params,
        ),
        caps,
        project,
        "the knowledge base's chunks found",
      );
    },
  });

/** Runs the agent, its steps told as progress; its failure (or cancellation) is the tool's error. */
const askAgent = async (
  { ports, caps }: ToolKit,
  ask: { project: string; agent: string; question: string },
  { signal, progress }: ToolContext,
): Promise<ToolDone> => {
  const project = ask.project;
  let traceId: string | null = null;
  let steps = 0;
  try {
    const answer = await ports.askAgent(ask, {
      signal,
      onStart: (id) => {
        traceId = id;
      },
      onStep: (step) => {
        const said = stepText(step);
        if (said) progress(++steps, said);
      },
    });
    const value = {
      answer: answer.answer,
      trace_id: answer.traceId,
      sql: [...answer.sql],
      context: [...answer.context],
    };
    return done(untrustedObjectAnswer(value, caps.maxChars, "the agent's answer and the context it used"), {
      project,
      traceId: answer.traceId,
    });
  } catch (error) {
    if (error instanceof AgentAskFailed) {
      const cancelled = error.failure.kind === 'aborted' || signal.aborted;
      return done(errorAnswer(error.message), {
        outcome: cancelled ? 'cancelled' : 'error',
        error: error.message,
        project,
        traceId: error.failure.traceId ?? traceId,
      });
    }
    if (isDomainError(error)) return { ...failed(error.detail, project), traceId };
    throw error;
  }
};

const askAgentTool = (kit: ToolKit): Tool =>
  tool({
    name: 'ask_agent',
    description: [
      'Ask an agent of a project a question and get its answer, with the SQL it ran and the context it used.',
      'The agent works with its own skills (SQL over its tables, knowledge-base search) and its own LLM; a',
      'run can take a while: progress is reported if you send a progressToken, and cancelling the request',
      "stops the run. The run is recorded as the agent's runs are (information_schema.AGENT_RUNS, by trace_id).",
    ].join(' '),
    input: askAgentArgs,
    output: z.object({
      answer: z.string(),
      trace_id: z.string(),
      sql: z.array(z.string()),
      context: z.array(z.unknown()),
    }),
    annotations: {
      title: 'Ask an agent',
      // It changes nothing (its SQL tools read only); its run is recorded, as every call is.
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
      // It calls the agent's LLM provider.
      openWorldHint: true,
    },
    run: async (args, context) => {
      const ref = projectRef(args.project, args.agent, defaultProject(context.caller));
      if (typeof ref === 'string') return invalid(ref, args.project ?? null);
      const refusal = askRefusal(context.caller, ref.project);
      if (refusal) return refused(refusal, ref.project);
      return askAgent(kit, { project: ref.project, agent: ref.name, question: args.question }, context);
    },
  });

const predictTool = ({ sql, caps }: ToolKit): Tool =>
  tool({
    name: 'predict',
    description:
      "One model's prediction for one row of inputs (its feature columns by name), as `SELECT * FROM project.model WHERE col = value AND …` does in SQL. Answers the predicted column(s) with their confidence and bounds where the model gives them.",
    input: predictArgs,
    output: tableOutput,
    annotations: { title: 'Predict', ...READ_ONLY },
    run: async (args, { caller, signal }) => {
      const ref = projectRef(args.project, args.model, defaultProject(caller));
      if (typeof ref === 'string') return invalid(ref, args.project ?? null);
      const project = ref.project;
      const entries = Object.entries(args.inputs);
      const params = Object.fromEntries(entries.map(([, v], i) => [`mcp_in${i}`, v]));
      const where = entries.map(([k, v], i) =>
        v === null ? `${name(k)} IS NULL` : `${name(k)} = :mcp_in${i}`,
      );
      return sqlDone(
        await sql(
          `SELECT * FROM ${qualified(project, ref.name)}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`,
          project,
          signal,
          params,
        ),
        caps,
        project,
        "the model's prediction",
      );
    },
  });

const verifyCallTool = ({ calls, caps }: ToolKit): Tool =>
  tool({
    name: 'verify_call',
    description: [
      "Check a call made over this MCP server against the tamper-evident log: the call's event (at the",
      "position in its result's _meta) is in the latest signed checkpoint's hash tree, the checkpoint's",
      'signature verifies, and the answer hash you give is the one recorded. A call made since the last',
      'checkpoint answers pending (checkpoints come every LEDGER_CHECKPOINT_MS).',
    ].join(' '),
    input: verifyCallArgs,
    annotations: { title: 'Verify a call', ...READ_ONLY },
    run: async (args, { caller }) => {
      const result = await calls.verify(caller, args.position, args.answer_hash);
      return done(objectAnswer(result, caps.maxChars), {
        outcome: result.verified ? 'ok' : 'error',
        error: result.verified ? null : (result.reason ?? null),
      });
    },
  });

/** The tools of the server in the order tools/list names them. */
const TOOLS = [
  queryTool,
  listDatabasesTool,
  listTablesTool,
  describeTableTool,
  searchKnowledgeBaseTool,
  askAgentTool,
  predictTool,
  verifyCallTool,
] as const;

/** The tools of the server, each with its JSON schema, a description to act on, and truthful hints. */
export const mcpTools = (ports: McpPorts, calls: McpCalls, caps: Caps): Tool[] => {
  const kit: ToolKit = {
    ports,
    calls,
    caps,
    sql: (query, db, signal, params = {}) => ports.sql(query, db, params, signal),
  };
  return TOOLS.map((make) => make(kit));
};

/** The catalog's condition for one relation (`database`.`table`, names folded as the SQL doors fold them). */
const relationIs = (database: string, table: string, schemaColumn: string, nameColumn: string) =>
  `lower(${schemaColumn}) = ${quoteString(database.toLowerCase())} AND lower(${nameColumn}) = ${quoteString(table.toLowerCase())}`;

/** The target of model `project.model` (undefined when it names no model). */
const modelTarget = async (ports: McpPorts, project: string, model: string, signal: AbortSignal) => {
  const found = await ports.sql(
    `SELECT PREDICT FROM information_schema.MODELS WHERE ${relationIs(project, model, 'PROJECT', 'NAME')} ORDER BY ACTIVE DESC, VERSION DESC LIMIT 1`,
    project,
    {},
    signal,
  );
  return found.type === 'table' && found.data.length > 0 ? String(found.data[0]![0]) : undefined;
};

/**
 * The columns and types of a table, view, knowledge base or model (describe_table, and the schema
 * resources), as the catalog lists them (information_schema.COLUMNS: the one listing every door
 * reads, src/sql/catalogListing.ts). A model's columns have a role besides: its features (typed as
 * it typed them when it learnt), its target, then its other outputs. What the catalog does not
 * list (an agent) is described by a read of no rows (`LIMIT 0`), as the SQL engine plans it.
 */
const describeObject = async (
  ports: McpPorts,
  database: string,
  table: string,
  signal: AbortSignal,
): Promise<McpSqlAnswer> => {
  const listed = await ports.sql(
    `SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE ${relationIs(database, table, 'TABLE_SCHEMA', 'TABLE_NAME')} ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    database,
    {},
    signal,
  );
  if (listed.type === 'table' && listed.data.length > 0) {
    // Of names differing only in case (an external database may hold "Users" and "users"), the one named.
    const exact = listed.data.filter((r) => r[0] === table);
    const rows = exact.length > 0 ? exact : listed.data.filter((r) => r[0] === listed.data[0]![0]);
    const target = await modelTarget(ports, database, table, signal);
    const at = target === undefined ? -1 : rows.findIndex((r) => String(r[1]) === target);
    const role = (i: number) => (i < at ? 'feature' : i === at ? 'target' : 'output');
    return {
      type: 'table',
      column_names: at < 0 ? ['column', 'type'] : ['column', 'type', 'role'],
      column_types: at < 0 ? ['VARCHAR', 'VARCHAR'] : ['VARCHAR', 'VARCHAR', 'VARCHAR'],
      data: rows.map((r, i) => (at < 0 ? [r[1], r[2]] : [r[1], r[2], role(i)])),
    };
  }
  const shape = await ports.sql(`SELECT * FROM ${qualified(database, table)} LIMIT 0`, database, {}, signal);
  if (shape.type !== 'table') return shape;
  return {
    type: 'table',
    column_names: ['column', 'type'],
    column_types: ['VARCHAR', 'VARCHAR'],
    data: shape.column_names.map((c, i) => [c, shape.column_types[i] ?? 'VARCHAR']),
  };
};

/** A table's schema as a resource: what describe_table answers, for one table. */
export const describeForResource = async (
  ports: McpPorts,
  database: string,
  table: string,
  signal: AbortSignal,
) => {
  const shape = await describeObject(ports, database, table, signal);
  if (shape.type === 'error') return shape;
  if (shape.type === 'ok') return { type: 'error' as const, error_code: 0, error_message: 'Not a table' };
  return {
    type: 'table' as const,
    database,
    table,
    columns: shape.data.map((r) => ({
      name: String(r[0]),
      type: String(r[1]),
      ...(r.length > 2 ? { role: String(r[2]) } : {}),
    })),
  };
};
