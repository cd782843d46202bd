import crypto from 'node:crypto';
import type {
  DuckDBConnection,
  DuckDBPreparedStatement,
  DuckDBResult,
  DuckDBType,
  DuckDBValue,
} from '@duckdb/node-api';
import { unspillableMemoryHeld } from '../../duckdb/memoryWatch';
import { StampedCache } from '../../shared/stampedCache';
import type { Prepared } from './plan';
import { withRenames, type TokenRename } from './literalShape';
import type { TableAnswer } from '../answers';
import type { SqlCacheName } from '../observer';

/** What a plan's key is stamped from: the read model's versions, per table and of the resource tables as a whole. */
export type PlanVersions = {
  /** Moves whenever a batch changes `table` (and when the tables are dropped). */
  tableVersion(table: string): number;
  /** Moves with every batch that changes any resource table (and when the tables are dropped). */
  readonly resourceVersion: number;
};

/**
 * What a plan depends on that no table's own version says: it is kept per version of all the
 * resource tables, as every plan was before (information_schema.COLUMNS and TABLES, whose
 * planning fills the object-columns table and lists external databases; AS OF; a scoped caller's
 * views). See `planDependencies`.
 */
export const ALL_RESOURCE_TABLES = '*';

/** One table's part of a plan's stamp (`ALL_RESOURCE_TABLES`: the resource tables as a whole, at `resourceVersion`). */
const tableStamp = (versions: PlanVersions, table: string, resourceVersion = versions.resourceVersion) =>
  table === ALL_RESOURCE_TABLES ? `*${resourceVersion}` : String(versions.tableVersion(table));

/** The stamp of a plan that resolved names from `reads`, from each table's part (`part`). */
const planStampOf = (reads: readonly string[], part: (table: string) => string) => {
  let stamp = '';
  for (const table of reads) stamp += `${part(table)}:`;
  return stamp;
};

/**
 * Parsed, resolved and planned SELECTs (metrics label `statement`): a plan cache, not an answer
 * cache. A SELECT's text met again skips DuckDB's parse and the resolution of its names; it is
 * still read. Each plan is kept for the versions of the tables its name resolution read
 * (`planDependencies`: which names are projects, integrations, files, models, agents, knowledge
 * bases, views), not of every resource table: a skill created leaves the plan of
 * `SELECT count(*) FROM information_schema.skills` in place, a view redefined re-plans the
 * queries that read it. Answers are cached once, by the SQL service (src/sql/service.ts,
 * `answers`), for the answers `isReusableAnswer` admits.
 */
export const preparedCache = (
  versions: PlanVersions,
  /** Told of each look-up, hit or miss (the operator's hit rate). */
  onLookup: (cache: Extract<SqlCacheName, 'statement'>, hit: boolean) => void = () => undefined,
) => ({
  queries: new StampedCache<Prepared>(
    (reads) => planStampOf(reads, (table) => tableStamp(versions, table)),
    1000,
  ),
  /**
   * Local plans that rename tokens of their text, by the text's literal shape
   * (src/sql/pipeline/literalShape.ts): a text met for the first time is planned from one.
   */
  shapes: new StampedCache<LocalPlan>(
    (reads) => planStampOf(reads, (table) => tableStamp(versions, table)),
    1000,
  ),
  /** What one planning depends on, noted as its look-ups are made (see `planDependencies`). */
  dependencies: (resourceVersionBefore: number) => planDependencies(versions, resourceVersionBefore),
  /** Per plan, the activity tables it reads (src/projection/readVersions.ts): found once per plan. */
  reads: new WeakMap<Prepared, readonly string[]>(),
  onLookup,
});

/**
 * The tables one planning's name resolution read, each noted with its version as the look-up
 * began: the plan is kept only if none moved before it is (`stampsThen`), and given while none
 * moves. `everything()` notes the resource tables as a whole, at their version before planning
 * began, for what no table's version says.
 */
const planDependencies = (versions: PlanVersions, resourceVersionBefore: number) => {
  const noted = new Map<string, string>();
  const note = (tables: readonly string[]) => {
    for (const table of tables)
      if (!noted.has(table)) noted.set(table, tableStamp(versions, table, resourceVersionBefore));
  };
  return {
    note,
    everything: () => note([ALL_RESOURCE_TABLES]),
    /** The tables noted, in the order noted. */
    reads: (): readonly string[] => [...noted.keys()],
    /** The stamp of `reads` as each table was when first noted. */
    stampsThen: (reads: readonly string[]) => planStampOf(reads, (table) => noted.get(table) ?? 'unnoted'),
  };
};
export type PlanDependencies = ReturnType<typeof planDependencies>;

export type PreparedCache = ReturnType<typeof preparedCache>;

type LocalPlan = Extract<Prepared, { kind: 'local' }>;

/**
 * A kept plan made `sql`'s: its renames made in `sql`'s own text, literals and all. One object, so
 * that a spec's kill check can break it (the kept plan run as it was, with its text's literals).
 */
export const sameShape = {
  planFor: (kept: LocalPlan, renames: readonly TokenRename[], sql: string): LocalPlan => ({
    ...kept,
    sql: withRenames(sql, renames),
  }),
};

/**
 * The plan of `sql` (key `key`) from a plan of the same literal shape (`shapeKey`), kept under
 * `key` too for the same tables' versions; undefined when none is kept.
 */
export const planOfSameShape = (
  cache: PreparedCache,
  shapeKey: string,
  key: string,
  sql: string,
): LocalPlan | undefined => {
  const entry = cache.shapes.entry(shapeKey);
  const renames = entry?.value.renames;
  if (!entry || !renames) return undefined;
  const plan = sameShape.planFor(entry.value, renames, sql);
  cache.queries.set(key, plan, entry.reads, () => entry.stamp);
  const reads = cache.reads.get(entry.value);
  if (reads) cache.reads.set(plan, reads);
  return plan;
};

/** The answer cache keeps answers of at most this many rows (a stream keeps no more while it reads)… */
export const MAX_CACHED_ROWS = 1000;
/** …and this many bytes of rows as JSON: its 700 entries of up to SQL_MAX_ANSWER_BYTES each would not be small. */
const MAX_CACHED_BYTES = 256 * 1024;

/**
 * Answers that depend only on the tables they read — a deterministic local query's (no
 * predictions, agents, external tables, knowledge-base searches, random(), now() or sampling),
 * read under no table policy — with the bytes of their rows as JSON and the activity tables they
 * read (src/projection/readVersions.ts). Only `runSelect` and `streamSelect` mark them, once read
 * (a stream: read to its end, not cut).
 */
const reusableAnswers = new WeakMap<TableAnswer, { bytes: number; reads: readonly string[] }>();
export const markReusable = (answer: TableAnswer, bytes: number, reads: readonly string[]): TableAnswer => {
  reusableAnswers.set(answer, { bytes, reads });
  return answer;
};

/**
 * Whether the answer cache may keep `answer` for the tables' stamp it was read at: it depends on
 * the tables alone (`markReusable`) and is small (MAX_CACHED_ROWS, MAX_CACHED_BYTES).
 */
export const isReusableAnswer = (answer: TableAnswer): boolean => {
  const marked = reusableAnswers.get(answer);
  return marked !== undefined && marked.bytes <= MAX_CACHED_BYTES && answer.data.length <= MAX_CACHED_ROWS;
};

/** The activity tables a reusable answer read (its stamp's, src/projection/readVersions.ts). */
export const activityTablesReadBy = (answer: TableAnswer): readonly string[] =>
  reusableAnswers.get(answer)?.reads ?? [];

/**
 * DuckDB prepared statements, per pooled connection: a repeated query skips DuckDB's statement
 * extraction and planning, which dominate the cost of small queries. DuckDB rebinds a statement when
 * the catalog changes but not when the data does, and its plan bakes in the statistics it saw (a
 * LIKE over an empty table is planned as "no rows", compressed materialisation truncates strings
 * longer than any seen): so a statement is kept only for the data epoch it was planned in.
 *
 * A statement is kept from the second run of its text on the connection: a text met once (an
 * analyst's query, each with its own literals) is most often never met again, and keeping its
 * statement cost a look at DuckDB's memory after the run (a trip to DuckDB's threads, 3-5% of a
 * 10 ms query) and a place among the kept ones. The texts met once are remembered by digest.
 */
type EpochStatement = { epoch: number; statement: DuckDBPreparedStatement };
type ConnectionStatements = {
  /** Statements kept for the next run of their text, least recently run first. */
  kept: Map<string, EpochStatement>;
  /** Digests of the texts run once and not kept, oldest first. */
  metOnce: Set<string>;
};
const statementsByConnection = new WeakMap<DuckDBConnection, ConnectionStatements>();
const MAX_STATEMENTS_PER_CONNECTION = 200;
/** Texts remembered as met once, per connection: enough for a client's statements to come round again. */
const MAX_MET_ONCE_PER_CONNECTION = 1000;
const statementsOn = (c: DuckDBConnection): ConnectionStatements => {
  let statements = statementsByConnection.get(c);
  if (!statements) statementsByConnection.set(c, (statements = { kept: new Map(), metOnce: new Set() }));
  return statements;
};
/** A short digest of a text (a text may be up to SQL_MAX_QUERY_BYTES). */
const digestOf = (sql: string) => crypto.createHash('sha256').update(sql).digest('base64');
/** Whether `sql` ran on `c` before (and is remembered as such from now on). */
const metBefore = (statements: ConnectionStatements, sql: string) => {
  const digest = digestOf(sql);
  if (statements.metOnce.delete(digest)) return true;
  statements.metOnce.add(digest);
  if (statements.metOnce.size > MAX_MET_ONCE_PER_CONNECTION)
    statements.metOnce.delete(statements.metOnce.values().next().value as string);
  return false;
};
/** The statement for `sql` planned in `epoch`, and whether it is kept (a text met before). */
const preparedStatement = async (
  c: DuckDBConnection,
  sql: string,
  epoch: number,
): Promise<{ statement: DuckDBPreparedStatement; keep: boolean }> => {
  const statements = statementsOn(c);
  const { kept } = statements;
  const cached = kept.get(sql);
  if (cached) {
    kept.delete(sql);
    if (cached.epoch === epoch) {
      kept.set(sql, cached);
      return { statement: cached.statement, keep: true };
    }
    cached.statement.destroySync();
  }
  const statement = await c.prepare(sql);
  if (!cached && !metBefore(statements, sql)) return { statement, keep: false };
  kept.set(sql, { epoch, statement });
  if (kept.size > MAX_STATEMENTS_PER_CONNECTION) {
    const [oldestSql, oldest] = kept.entries().next().value as [string, EpochStatement];
    kept.delete(oldestSql);
    oldest.statement.destroySync();
  }
  return { statement, keep: true };
};

/**
 * A DuckDB statement keeps its last run's state (its plan's operators hold an aggregate's table, a
 * join's hash table, a sort's runs: 800 MB for a 200 MB string_agg, 9.5 GB in one probe) until it
 * runs again or is destroyed. Planning is what reusing a statement saves, worth it for quick
 * queries only: a statement whose run took longer than this, or failed, is destroyed at once.
 */
const KEEP_STATEMENTS_UNDER_MS = 50;
/**
 * Time alone does not bound that state: on a quick machine, a string_agg over 6,000,000 rows ran in
 * 44 ms and its statement held 24 MiB. A statement whose run took this long is kept only while
 * DuckDB holds less than KEEP_WHILE_HELD_UNDER_BYTES it cannot evict (a look costs about the round
 * trip of `SELECT 1`, a few percent of such a run). A quicker run cannot have built much.
 */
const LOOK_AT_MEMORY_AFTER_MS = 5;
const KEEP_WHILE_HELD_UNDER_BYTES = 4 * 1024 * 1024;
/** Whether a statement that ran for `ms` may be kept for its next run, on `c` (not when the look fails). */
const mayKeep = async (c: DuckDBConnection, ms: number) =>
  ms < KEEP_STATEMENTS_UNDER_MS &&
  (ms < LOOK_AT_MEMORY_AFTER_MS ||
    (await unspillableMemoryHeld(c).catch(() => Infinity)) < KEEP_WHILE_HELD_UNDER_BYTES);
const forgetStatement = (c: DuckDBConnection, sql: string, statement: DuckDBPreparedStatement) => {
  const { kept } = statementsOn(c);
  if (kept.get(sql)?.statement === statement) kept.delete(sql);
  statement.destroySync();
};

/**
 * Binds values by name in one pass. DuckDB's `bind(record)` finds each name's index with
 * `duckdb_bind_parameter_index`, a scan of all the statement's parameters: quadratic, 24,000 named
 * parameters held the event loop for 7.6 s. The names are read once by index instead (a name DuckDB
 * spells otherwise, e.g. in another case, is still looked up its way). A name the statement does not
 * have was taken out by planning (a knowledge base's question, `content = :q`, is asked before the
 * query runs): its value was used there.
 */
const bindByName = (
  statement: DuckDBPreparedStatement,
  values: Record<string, DuckDBValue>,
  types: Record<string, DuckDBType>,
) => {
  const indexOf = new Map<string, number>();
  for (let i = 1; i <= statement.parameterCount; i++) indexOf.set(statement.parameterName(i), i);
  for (const name of Object.keys(values)) {
    const index = indexOf.get(name) ?? indexIn(statement, name);
    if (index !== undefined) statement.bindValue(index, values[name]!, types[name]);
  }
};

const indexIn = (statement: DuckDBPreparedStatement, name: string) => {
  try {
    return statement.parameterIndex(name);
  } catch {
    return undefined;
  }
};

/** `c.stream(sql, values, types)`, its values bound by `bindByName`. */
export const streamBound = async (
  c: DuckDBConnection,
  sql: string,
  values: Record<string, DuckDBValue>,
  types: Record<string, DuckDBType>,
): Promise<DuckDBResult> => {
  if (Object.keys(values).length === 0) return c.stream(sql, values, types);
  const statement = await c.prepare(sql);
  try {
    bindByName(statement, values, types);
    return await statement.stream();
  } finally {
    statement.destroySync();
  }
};

/**
 * Runs a deterministic local query, through a reused statement when the data is at rest. The
 * statement's execution is its own transaction, whose snapshot is taken as its run starts (within
 * `stream`). If a batch was written between the planning and that start, the plan may not fit the
 * data the run reads (wrong rows, or an error: "statistics … corrupt" from a perfect hash
 * aggregate planned for fewer groups), so the query runs again, planned and executed together; a
 * run left unread gives way to the next one on its connection. A batch written once the run has
 * started is not in its snapshot: the rows are read on. Asked after the rows were read instead (as
 * before), the window took in the fetches and the look at DuckDB's memory too, while a batch's
 * commit waits for the disk: under the mixed load's steady writes 9-60% of the SELECTs run through
 * a kept or new statement ran twice (issue 62).
 */
export const readDeterministic = async <T>(
  c: DuckDBConnection,
  sql: string,
  values: Record<string, DuckDBValue>,
  types: Record<string, DuckDBType>,
  read: (result: DuckDBResult) => Promise<T>,
  dataEpoch: () => number,
): Promise<T> => {
  const epoch = dataEpoch();
  if (epoch % 2 === 0) {
    const { statement, keep } = await preparedStatement(c, sql, epoch);
    statement.clearBindings();
    bindByName(statement, values, types);
    const started = Date.now();
    let kept = false;
    try {
      const result = await statement.stream().catch((error: unknown) => {
        if (dataEpoch() === epoch) throw error;
        return undefined;
      });
      if (result && dataEpoch() === epoch) {
        const answer = await read(result);
        kept = keep && (await mayKeep(c, Date.now() - started));
        return answer;
      }
    } finally {
      if (!kept) forgetStatement(c, sql, statement);
    }
  }
  return read(await streamBound(c, sql, values, types));
};
