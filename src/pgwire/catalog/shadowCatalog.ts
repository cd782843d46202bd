import { NamedError } from '../../shared/errors';
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isKeyword, isRelationName, significant, textOf, tokenize } from '../../shared/sqlTokens';
import { NAMED_DUCKDB_TYPES, Oid, pgTypeOf } from '../protocol/types';
import { fromFunctionEdits } from './fromFunctions';

/**
 * PostgreSQL's system catalogs (`pg_catalog.pg_class`, `pg_namespace`, `pg_attribute` …) for the
 * tools that browse through them: psql's `\dt`, `\d name`, `\dn`, `\l`, and the schema browsers of
 * Superset (SQLAlchemy), DBeaver and drivers.
 *
 * DuckDB implements much of pg_catalog over its own catalog. So the door keeps a small in-memory
 * DuckDB (the shadow) holding what a client may see as empty tables: one schema per database the
 * engine lists (projects, `files`, external databases), one table per table with the engine's column
 * names and types. A catalog query runs there, as the client wrote it, with the few functions and
 * relations DuckDB lacks supplied from the `pg_mindledger` schema (hidden from listings, as every
 * `pg_` schema is). The shadow holds no data and is rebuilt when the engine's listing changes.
 */

/** One column as the engine's information_schema.COLUMNS lists it. */
type ListedColumn = { schema: string; table: string; column: string; type: string };

/** A table the engine lists as a view (information_schema.TABLES), with its query when known. */
type ListedView = { schema: string; table: string; definition: string | null };

/** What the engine lists: its databases (some without tables), their tables' columns, and which tables are views. */
export type Listing = { databases: string[]; columns: ListedColumn[]; views: ListedView[] };

export type CatalogAnswer = { columnNames: string[]; columnTypes: string[]; rows: unknown[][] };

/** Relations a statement must name to be answered here. */
const CATALOG_RELATIONS = new Set([
  'PG_CATALOG',
  'PG_CLASS',
  'PG_NAMESPACE',
  'PG_ATTRIBUTE',
  'PG_TYPE',
  'PG_DATABASE',
  'PG_ROLES',
  'PG_USER',
  'PG_PROC',
  'PG_INDEX',
  'PG_CONSTRAINT',
  'PG_DESCRIPTION',
  'PG_AM',
  'PG_TABLES',
  'PG_VIEWS',
  'PG_SETTINGS',
  'PG_ATTRDEF',
  'PG_INHERITS',
  'PG_TABLESPACE',
  'PG_ENUM',
  'PG_COLLATION',
  'PG_EXTENSION',
]);

/** PostgreSQL's information_schema relations the shadow answers (DuckDB's, shown PostgreSQL's way). */
const INFORMATION_SCHEMA_RELATIONS = new Set(['SCHEMATA', 'TABLES', 'COLUMNS', 'VIEWS']);

/**
 * Functions of PostgreSQL's catalog that the engine lacks and tools' metadata queries call on
 * information_schema (Grafana's table and column pickers: quote_ident, parse_ident, the search
 * path split with string_to_array).
 */
const CATALOG_FUNCTIONS = new Set([
  'QUOTE_IDENT',
  'PARSE_IDENT',
  'STRING_TO_ARRAY',
  'ARRAY_LOWER',
  'ARRAY_UPPER',
  'FORMAT_TYPE',
  'PG_GET_USERBYID',
  'OBJ_DESCRIPTION',
  'COL_DESCRIPTION',
]);

const inFromPosition = (before: string | undefined) =>
  before === 'FROM' || before === 'JOIN' || before === ',';

/**
 * Whether a statement reads PostgreSQL's catalogs (its words as read, upper-cased): a SELECT naming
 * `pg_catalog.<relation>`, or a catalog relation right after FROM, JOIN or a comma; or one reading
 * `information_schema.tables` (`schemata`, `columns`, `views`) through PostgreSQL's catalog
 * functions, as tools do (a plain read of information_schema is the engine's, MindsDB's own). A
 * column or an external database's own `pg_catalog` (`my_pg.pg_catalog.pg_tables`) is not one.
 */
export const readsCatalog = (words: readonly string[]) =>
  (words[0] === 'SELECT' || words[0] === 'WITH') &&
  (words.some((w, i) => {
    const before = words[i - 1];
    if (w === 'PG_CATALOG') return before !== '.' && words[i + 1] === '.' && words[i + 3] !== '(';
    return CATALOG_RELATIONS.has(w) && words[i + 1] !== '(' && inFromPosition(before);
  }) ||
    (words.some(
      (w, i) =>
        w === 'INFORMATION_SCHEMA' &&
        inFromPosition(words[i - 1]) &&
        words[i + 1] === '.' &&
        INFORMATION_SCHEMA_RELATIONS.has(words[i + 2] ?? ''),
    ) &&
      words.some((w, i) => CATALOG_FUNCTIONS.has(w) && words[i + 1] === '(')));

/** PostgreSQL's information_schema name of each type the door sends (`data_type` of information_schema.columns). */
const INFORMATION_SCHEMA_TYPE_NAMES: Record<number, string> = {
  [Oid.bool]: 'boolean',
  [Oid.bytea]: 'bytea',
  [Oid.int8]: 'bigint',
  [Oid.int2]: 'smallint',
  [Oid.int4]: 'integer',
  [Oid.text]: 'text',
  [Oid.json]: 'json',
  [Oid.float4]: 'real',
  [Oid.float8]: 'double precision',
  [Oid.varchar]: 'character varying',
  [Oid.date]: 'date',
  [Oid.time]: 'time without time zone',
  [Oid.timestamp]: 'timestamp without time zone',
  [Oid.timestamptz]: 'timestamp with time zone',
  [Oid.interval]: 'interval',
  [Oid.numeric]: 'numeric',
  [Oid.uuid]: 'uuid',
};

/** PostgreSQL's name of a DuckDB type as information_schema.columns gives it (the door's own mapping, pgTypeOf). */
export const informationSchemaTypeName = (duckType: string) => {
  const type = pgTypeOf(duckType);
  return type.kind === 'array' ? 'ARRAY' : (INFORMATION_SCHEMA_TYPE_NAMES[type.oid] ?? 'text');
};

/** PostgreSQL's name of each DuckDB type, as a macro the information_schema.columns view calls. */
const typeNameMacro = () => {
  const cases = NAMED_DUCKDB_TYPES.map((n) => `WHEN '${n}' THEN '${informationSchemaTypeName(n)}'`).join(' ');
  return (
    `CREATE MACRO pg_mindledger.pg_type_name(t) AS CASE t ${cases} ` +
    `ELSE CASE WHEN t LIKE 'DECIMAL(%' THEN 'numeric' WHEN t LIKE '%[]' THEN 'ARRAY' ELSE 'text' END END`
  );
};

/** A view's definition by its oid: the engine's query, kept beside the shadow's views. */
const VIEW_DEFINITION = `SELECT d.definition FROM duckdb_views() v JOIN pg_mindledger.view_definitions d
  ON d.schema_name = v.schema_name AND d.view_name = v.view_name WHERE v.view_oid = o`;

/** What DuckDB's pg_catalog lacks and psql and SQLAlchemy use; empty relations where there is nothing to list. */
export const SHIMS = [
  `CREATE MACRO pg_mindledger.pg_get_userbyid(id) AS 'mindledger'`,
  `CREATE MACRO pg_mindledger.pg_encoding_to_char(e) AS 'UTF8'`,
  `CREATE MACRO pg_mindledger.pg_get_indexdef(a) AS NULL::VARCHAR, (a, b, c) AS NULL::VARCHAR`,
  `CREATE MACRO pg_mindledger.pg_get_triggerdef(a) AS NULL::VARCHAR, (a, b) AS NULL::VARCHAR`,
  `CREATE MACRO pg_mindledger.pg_get_expr(a, b) AS NULL::VARCHAR, (a, b, c) AS NULL::VARCHAR`,
  `CREATE MACRO pg_mindledger.pg_get_statisticsobjdef_columns(a) AS NULL::VARCHAR`,
  `CREATE MACRO pg_mindledger.pg_get_partkeydef(a) AS NULL::VARCHAR`,
  `CREATE MACRO pg_mindledger.pg_get_function_identity_arguments(a) AS ''`,
  `CREATE MACRO pg_mindledger.pg_relation_size(a) AS 0::BIGINT`,
  `CREATE MACRO pg_mindledger.pg_total_relation_size(a) AS 0::BIGINT`,
  `CREATE MACRO pg_mindledger.pg_table_size(a) AS 0::BIGINT`,
  `CREATE MACRO pg_mindledger.pg_database_size(a) AS 0::BIGINT`,
  `CREATE MACRO pg_mindledger.quote_ident(s) AS CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_]*') THEN s ELSE '"' || replace(s, '"', '""') || '"' END`,
  `CREATE MACRO pg_mindledger.pg_is_in_recovery() AS false`,
  `CREATE MACRO pg_mindledger.pg_relation_is_publishable(a) AS false`,
  `CREATE MACRO pg_mindledger.pg_get_serial_sequence(t, c) AS NULL::VARCHAR`,
  `CREATE MACRO pg_mindledger.array_upper(a, d) AS len(a)`,
  `CREATE MACRO pg_mindledger.array_lower(a, d) AS 1`,
  `CREATE TABLE pg_mindledger.pg_roles(oid BIGINT, rolname VARCHAR, rolsuper BOOLEAN, rolinherit BOOLEAN, rolcreaterole BOOLEAN, rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, rolreplication BOOLEAN, rolconnlimit INTEGER, rolvaliduntil TIMESTAMP, rolbypassrls BOOLEAN, rolconfig VARCHAR[])`,
  `INSERT INTO pg_mindledger.pg_roles VALUES (10, 'mindledger', false, true, false, false, true, false, -1, NULL, false, NULL)`,
  `CREATE VIEW pg_mindledger.pg_user AS SELECT rolname AS usename, oid AS usesysid, rolcreatedb AS usecreatedb, rolsuper AS usesuper FROM pg_mindledger.pg_roles`,
  `CREATE TABLE pg_mindledger.pg_inherits(inhrelid BIGINT, inhparent BIGINT, inhseqno INTEGER, inhdetachpending BOOLEAN)`,
  `CREATE TABLE pg_mindledger.pg_policy(oid BIGINT, polname VARCHAR, polrelid BIGINT, polcmd VARCHAR, polpermissive BOOLEAN, polroles BIGINT[], polqual VARCHAR, polwithcheck VARCHAR)`,
  `CREATE TABLE pg_mindledger.pg_statistic_ext(oid BIGINT, stxrelid BIGINT, stxname VARCHAR, stxnamespace BIGINT, stxowner BIGINT, stxstattarget INTEGER, stxkeys INTEGER[], stxkind VARCHAR[], stxexprs VARCHAR)`,
  `CREATE TABLE pg_mindledger.pg_publication(oid BIGINT, pubname VARCHAR, pubowner BIGINT, puballtables BOOLEAN, pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, pubviaroot BOOLEAN)`,
  `CREATE TABLE pg_mindledger.pg_publication_rel(oid BIGINT, prpubid BIGINT, prrelid BIGINT, prqual VARCHAR, prattrs INTEGER[])`,
  `CREATE TABLE pg_mindledger.pg_publication_namespace(oid BIGINT, pnpubid BIGINT, pnnspid BIGINT)`,
  `CREATE TABLE pg_mindledger.pg_trigger(oid BIGINT, tgrelid BIGINT, tgparentid BIGINT, tgname VARCHAR, tgfoid BIGINT, tgtype INTEGER, tgenabled VARCHAR, tgisinternal BOOLEAN)`,
  `CREATE TABLE pg_mindledger.pg_rewrite(oid BIGINT, rulename VARCHAR, ev_class BIGINT, ev_type VARCHAR, ev_enabled VARCHAR, is_instead BOOLEAN)`,
  `CREATE TABLE pg_mindledger.pg_foreign_table(ftrelid BIGINT, ftserver BIGINT, ftoptions VARCHAR[])`,
  `CREATE TABLE pg_mindledger.pg_partitioned_table(partrelid BIGINT, partstrat VARCHAR, partnatts INTEGER)`,
  `CREATE TABLE pg_mindledger.pg_extension(oid BIGINT, extname VARCHAR, extowner BIGINT, extnamespace BIGINT, extrelocatable BOOLEAN, extversion VARCHAR)`,
  `CREATE TABLE pg_mindledger.pg_event_trigger(oid BIGINT, evtname VARCHAR, evtevent VARCHAR, evtowner BIGINT, evtfoid BIGINT, evtenabled VARCHAR, evttags VARCHAR[])`,
  `CREATE TABLE pg_mindledger.pg_database(oid BIGINT, datname VARCHAR, datdba BIGINT, encoding INTEGER, datlocprovider VARCHAR, datistemplate BOOLEAN, datallowconn BOOLEAN, datconnlimit INTEGER, datcollate VARCHAR, datctype VARCHAR, daticulocale VARCHAR, daticurules VARCHAR, datacl VARCHAR[], dattablespace BIGINT)`,
  // Listings without the shims' own schema (and DuckDB's default one, unless a database is called so).
  `CREATE MACRO pg_mindledger.hidden(name) AS name = 'pg_mindledger' OR (name = 'main' AND NOT EXISTS (SELECT 1 FROM pg_mindledger.pg_database WHERE datname = 'main'))`,
  `CREATE VIEW pg_mindledger.pg_namespace AS SELECT * FROM pg_catalog.pg_namespace WHERE NOT pg_mindledger.hidden(nspname)`,
  // reloptions typed as the list it is in PostgreSQL (DuckDB's is a bare NULL, which unnest cannot bind: \d+).
  `CREATE VIEW pg_mindledger.pg_class AS SELECT * REPLACE (CAST(reloptions AS VARCHAR[]) AS reloptions), false AS relforcerowsecurity FROM pg_catalog.pg_class WHERE relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE pg_mindledger.hidden(nspname))`,
  `CREATE VIEW pg_mindledger.pg_tables AS SELECT * FROM pg_catalog.pg_tables WHERE NOT pg_mindledger.hidden(schemaname)`,
  // Views: the engine's query is their definition (\d+, pg_views), not the shadow's empty SELECT.
  `CREATE TABLE pg_mindledger.view_definitions(schema_name VARCHAR, view_name VARCHAR, definition VARCHAR)`,
  `CREATE MACRO pg_mindledger.pg_get_viewdef(o) AS (${VIEW_DEFINITION}), (o, pretty) AS (${VIEW_DEFINITION})`,
  `CREATE VIEW pg_mindledger.pg_views AS SELECT d.schema_name AS schemaname, d.view_name AS viewname, 'mindledger' AS viewowner, d.definition FROM pg_mindledger.view_definitions d`,
  // Settings as DuckDB lists them, but no path of the server's disk (home, secrets, extensions,
  // temp files): a setting naming an absolute path reads as empty, as PostgreSQL's path settings
  // (data_directory, config_file, hba_file …) are absent here.
  `CREATE VIEW pg_mindledger.pg_settings AS SELECT * REPLACE (CASE WHEN regexp_matches(setting, '(^|[\\[,''"\\s])(/|~|[A-Za-z]:[\\\\/])') THEN '' ELSE setting END AS setting) FROM pg_catalog.pg_settings WHERE name NOT IN ('data_directory', 'config_file', 'hba_file', 'ident_file', 'external_pid_file')`,
  `CREATE TABLE pg_mindledger.pg_matviews(schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, tablespace VARCHAR, hasindexes BOOLEAN, ispopulated BOOLEAN, definition VARCHAR)`,
  // parse_ident('a."B c"') is ['a', 'B c']: unquoted parts fold to lower case (dots inside quotes are not read).
  `CREATE MACRO pg_mindledger.parse_ident(s) AS list_transform(string_split(s, '.'), x -> CASE WHEN x LIKE '"%"' THEN replace(x[2:-2], '""', '"') ELSE lower(trim(x)) END)`,
  // information_schema as PostgreSQL shows it: the shadow's machinery hidden, PostgreSQL's type names.
  typeNameMacro(),
  `CREATE VIEW pg_mindledger.information_schema_schemata AS SELECT * FROM information_schema.schemata WHERE NOT pg_mindledger.hidden(schema_name)`,
  `CREATE VIEW pg_mindledger.information_schema_tables AS SELECT * FROM information_schema.tables WHERE NOT pg_mindledger.hidden(table_schema)`,
  `CREATE VIEW pg_mindledger.information_schema_views AS SELECT * FROM information_schema.views WHERE NOT pg_mindledger.hidden(table_schema)`,
  `CREATE VIEW pg_mindledger.information_schema_columns AS SELECT * REPLACE (pg_mindledger.pg_type_name(data_type) AS data_type) FROM information_schema.columns WHERE NOT pg_mindledger.hidden(table_schema)`,
];

/** The shim names a statement may qualify with `pg_catalog.`: the qualifier is dropped so the shim answers. */
const SHIM_NAMES = new Set(
  SHIMS.map((s) => /pg_mindledger\.([a-z_]+)/.exec(s)?.[1]).filter((n): n is string => n !== undefined),
);

/** PostgreSQL's object-identifier types, which DuckDB lacks: their values are shown as text. */
const OID_TYPES = new Set([
  'regtype',
  'regclass',
  'regproc',
  'regprocedure',
  'regnamespace',
  'regrole',
  'regoper',
  'regconfig',
]);

/**
 * PostgreSQL's catalog text as DuckDB runs it: `OPERATOR(pg_catalog.~)` is the operator itself,
 * `COLLATE pg_catalog.default` goes, and `pg_catalog.` before a shim goes (the shim is found on the
 * search path).
 */
export const catalogText = (sql: string): string => {
  const tokens = tokenize(sql, 'duckdb');
  const words = significant(tokens);
  const drop = new Set<number>();
  const replace = new Map<number, string>();
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!;
    const text = textOf(sql, t).toLowerCase();
    const at = (k: number) => (words[i + k] ? textOf(sql, words[i + k]!) : '');
    if (
      isKeyword(sql, t, 'OPERATOR') &&
      at(1) === '(' &&
      at(2).toLowerCase() === 'pg_catalog' &&
      at(3) === '.'
    ) {
      // OPERATOR ( pg_catalog . ~ ) → ~ (the operator may be several symbol tokens: !~, ~~*)
      let j = i + 4;
      let op = '';
      while (words[j] && textOf(sql, words[j]!) !== ')') op += textOf(sql, words[j++]!);
      replace.set(words[i]!.start, op);
      for (let k = i + 1; k <= j; k++) drop.add(words[k]!.start);
      i = j;
    } else if (isKeyword(sql, t, 'COLLATE') && at(1).toLowerCase() === 'pg_catalog' && at(2) === '.') {
      for (let k = i; k <= i + 3; k++) drop.add(words[k]!.start);
      i += 3;
    } else if (text === '::' || (text === ':' && at(1) === ':')) {
      // Casts: `::pg_catalog.text` is `::text`; object-identifier types are text here.
      const first = text === '::' ? 1 : 2;
      let k = i + first;
      if (at(first).toLowerCase() === 'pg_catalog' && at(first + 1) === '.') {
        drop.add(words[k]!.start);
        drop.add(words[k + 1]!.start);
        k += 2;
      }
      const type = words[k] ? textOf(sql, words[k]!) : '';
      if (OID_TYPES.has(type.toLowerCase())) replace.set(words[k]!.start, 'VARCHAR');
      else if (type === '"char"') replace.set(words[k]!.start, 'VARCHAR');
      i = k;
    } else if (isKeyword(sql, t, 'AS') && OID_TYPES.has(at(1).toLowerCase()) && at(2) === ')') {
      // CAST(x AS regclass): as `::regclass`, text here.
      replace.set(words[i + 1]!.start, 'VARCHAR');
      i += 1;
    } else if (text === 'json_build_object' && at(1) === '(') {
      // PostgreSQL's name for DuckDB's json_object (same arguments: keys and values in turn).
      replace.set(t.start, 'json_object');
    } else if (
      text === 'information_schema' &&
      (i === 0 || textOf(sql, words[i - 1]!) !== '.') &&
      at(1) === '.' &&
      INFORMATION_SCHEMA_RELATIONS.has(at(2).toUpperCase())
    ) {
      // information_schema.tables → the view hiding the shadow's machinery, under the same name.
      const relation = at(2).toLowerCase();
      const aliased = isKeyword(sql, words[i + 3], 'AS') || isRelationName(sql, words[i + 3]);
      replace.set(t.start, `pg_mindledger.information_schema_${relation}${aliased ? '' : ` AS ${relation}`}`);
      drop.add(words[i + 1]!.start);
      drop.add(words[i + 2]!.start);
      i += 2;
    } else if (
      text === 'pg_catalog' &&
      at(1) === '.' &&
      (SHIM_NAMES.has(at(2).toLowerCase()) || at(3) === '(')
    ) {
      // A shim, or a function: DuckDB finds its built-in ones (and pg_catalog's macros) unqualified.
      drop.add(t.start);
      drop.add(words[i + 1]!.start);
      i += 1;
    }
  }
  for (const [start, text] of fromFunctionEdits(sql, words))
    if (!replace.has(start)) replace.set(start, text);
  return tokens.map((t) => (drop.has(t.start) ? '' : (replace.get(t.start) ?? textOf(sql, t)))).join('');
};

/** A catalog query this server does not run (more than one statement, not a SELECT, too large). */
export class CatalogRefusal extends NamedError {}

/** A catalog query stopped at a limit: its time (or its wait for a shadow process), or its memory. */
export class CatalogLimitExceeded extends Error {
  constructor(
    readonly limit: 'time' | 'memory',
    message: string,
  ) {
    super(message);
    this.name = 'CatalogLimitExceeded';
  }
}

export type CatalogLimits = {
  /** A catalog query running longer is stopped; waiting for a free shadow process is bounded alike, apart. */
  timeoutMs: number;
  /** Past this many rows an answer is refused, not cut. */
  maxRows: number;
  /** DuckDB's memory_limit in a shadow process, and how far a query may grow that process (MiB). */
  memoryMb: number;
  /** Shadow processes at most: catalog queries running at once. */
  processes: number;
};

const DEFAULT_CATALOG_LIMITS: CatalogLimits = {
  timeoutMs: 10_000,
  maxRows: 100_000,
  memoryMb: 128,
  processes: 2,
};

/** What the server asks a shadow process (shadowProcess.ts). */
export type ShadowRequest =
  | { type: 'query'; id: number; sql: string; params: unknown[]; listing: Listing; database: string }
  | { type: 'interrupt'; id: number };

/** What a shadow process answers; `rss` is its resident memory then, in bytes. */
export type ShadowReply =
  | { type: 'ready'; rss: number }
  | { type: 'running'; id: number; rss: number }
  | { type: 'answer'; id: number; answer: CatalogAnswer }
  | {
      type: 'failed';
      id: number;
      kind: 'refusal' | 'interrupted' | 'memory' | 'error';
      message: string;
    };

/** After an interrupt, how long a shadow process has to answer before it is killed. */
const KILL_GRACE_MS = 300;
/** How often a running query's process has its memory read. */
const MEMORY_CHECK_MS = 10;
/** A shadow process idle this long ends (the first one stays). */
const IDLE_MS = 60_000;

/** A process's resident memory in bytes (Linux's /proc), undefined where it cannot be read. */
const rssOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
};

type Job = {
  id: number;
  request: Extract<ShadowRequest, { type: 'query' }>;
  owner: string;
  signal: AbortSignal | undefined;
  settled: boolean;
  resolve(answer: CatalogAnswer): void;
  reject(error: unknown): void;
  /** Why the client was answered before the process was (a limit, a cancel): set once. */
  stopped?: unknown;
  cleanup: (() => void)[];
};

const settle = (job: Job, outcome: { answer: CatalogAnswer } | { error: unknown }) => {
  if (job.settled) return;
  job.settled = true;
  for (const c of job.cleanup.splice(0)) c();
  if ('answer' in outcome) job.resolve(outcome.answer);
  else job.reject(outcome.error);
};

/** One shadow process, serving one query at a time. */
class ShadowProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  job: Job | undefined;
  gone = false;
  private readyRss = 0;
  private startRss = 0;
  private timers: NodeJS.Timeout[] = [];
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: CatalogLimits,
    private readonly onFree: (p: ShadowProcess) => void,
    private readonly onGone: (p: ShadowProcess) => void,
  ) {
    // From source (tests, tsx) the process is TypeScript: tsx's require hook goes first. Built, it is JavaScript.
    const fromSource = __filename.endsWith('.ts');
    this.child = fork(
      path.join(__dirname, fromSource ? 'shadowProcess.ts' : 'shadowProcess.js'),
      [JSON.stringify({ memoryMb: limits.memoryMb, maxRows: limits.maxRows })],
      {
        execArgv: fromSource ? ['--require', require.resolve('tsx/cjs')] : [],
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
        serialization: 'advanced',
      },
    );
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.on('message', (m: ShadowReply) => {
        if (m.type === 'ready') {
          this.readyRss = m.rss;
          resolve();
        } else this.reply(m);
      });
      this.child.once('exit', (code, signal) => {
        reject(new Error(`the catalog process ended (${signal ?? code})`));
        this.exited();
      });
    });
    this.ready.catch(() => undefined);
  }

  /** Runs `job`: answered by the process, or stopped at its deadline, its memory, or its client's cancel. */
  async run(job: Job) {
    this.job = job;
    clearTimeout(this.idleTimer);
    try {
      await this.ready;
    } catch (error) {
      settle(job, { error });
      return;
    }
    if (job.settled || job.signal?.aborted) {
      settle(job, { error: job.signal?.reason });
      return this.free();
    }
    this.child.ref();
    this.child.channel?.ref();
    this.startRss = rssOf(this.child.pid) ?? this.readyRss;
    const stop = (why: unknown) => {
      job.stopped ??= why;
      settle(job, { error: job.stopped });
      if (this.gone || this.job !== job) return;
      this.child.send({ type: 'interrupt', id: job.id } satisfies ShadowRequest);
      this.timers.push(setTimeout(() => this.kill(), KILL_GRACE_MS));
    };
    this.timers.push(
      setTimeout(
        () =>
          stop(
            new CatalogLimitExceeded(
              'time',
              `canceling statement due to statement timeout: a catalog query runs at most ${this.limits.timeoutMs} ms`,
            ),
          ),
        this.limits.timeoutMs,
      ),
    );
    const limit = this.limits.memoryMb * 1024 * 1024;
    this.timers.push(
      setInterval(() => {
        const rss = rssOf(this.child.pid);
        if (rss === undefined || rss - this.startRss <= limit) return;
        job.stopped ??= new CatalogLimitExceeded(
          'memory',
          `out of memory: a catalog query may use at most ${this.limits.memoryMb} MB`,
        );
        settle(job, { error: job.stopped });
        this.kill();
      }, MEMORY_CHECK_MS),
    );
    if (job.signal) {
      const onAbort = () => stop(job.signal!.reason);
      job.signal.addEventListener('abort', onAbort);
      job.cleanup.push(() => job.signal!.removeEventListener('abort', onAbort));
    }
    this.child.send(job.request satisfies ShadowRequest);
  }

  private reply(m: Exclude<ShadowReply, { type: 'ready' }>) {
    const job = this.job;
    if (!job || m.id !== job.id) return;
    if (m.type === 'running') {
      // The listing is in place: the query's own growth is counted from here.
      this.startRss = Math.max(this.startRss, m.rss);
      return;
    }
    if (m.type === 'answer') settle(job, { answer: m.answer });
    else
      settle(job, {
        error:
          job.stopped ??
          (m.kind === 'refusal'
            ? new CatalogRefusal(m.message)
            : m.kind === 'memory'
              ? new CatalogLimitExceeded('memory', `out of memory: ${m.message}`)
              : new Error(m.message)),
      });
    // A process left much larger than it started (memory a query's allocator kept) is not reused.
    const rss = rssOf(this.child.pid);
    if (rss !== undefined && rss - this.readyRss > this.limits.memoryMb * 1024 * 1024) this.kill();
    else this.free();
  }

  private free() {
    for (const t of this.timers.splice(0)) clearTimeout(t);
    this.job = undefined;
    // An idle process does not keep its server's process alive.
    this.child.unref();
    this.child.channel?.unref();
    this.onFree(this);
  }

  /** Ends an idle process after a while (the pool keeps its first). */
  idle(end: boolean) {
    clearTimeout(this.idleTimer);
    if (end) this.idleTimer = setTimeout(() => this.kill(), IDLE_MS).unref();
  }

  kill() {
    if (!this.gone) this.child.kill('SIGKILL');
  }

  private exited() {
    this.gone = true;
    clearTimeout(this.idleTimer);
    for (const t of this.timers.splice(0)) clearTimeout(t);
    const job = this.job;
    this.job = undefined;
    if (job) settle(job, { error: job.stopped ?? new Error('the catalog process ended unexpectedly') });
    this.onGone(this);
  }
}

/**
 * The catalog shadow: psql's and the tools' pg_catalog queries answered by DuckDB (shadowDatabase.ts)
 * in processes of its own, at most `processes` at once, each query bounded: past `timeoutMs` it is
 * interrupted, and its process killed if that does not stop it; a process grown past `memoryMb` by
 * its query is killed at once (DuckDB's own limits do not bound a list or a string one call builds,
 * nor interrupt that call). A client's cancel or departure stops its query the same way. A query
 * waits for a free process at most `timeoutMs` (then it is refused), and one client (`owner`) holds
 * at most all processes but one, so its heavy queries leave another client a process.
 */
export class ShadowCatalog {
  private readonly limits: CatalogLimits;
  private readonly processes = new Set<ShadowProcess>();
  private readonly idle: ShadowProcess[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(limits: Partial<CatalogLimits> = {}) {
    this.limits = { ...DEFAULT_CATALOG_LIMITS, ...limits };
  }

  /** Catalog queries a shadow process is running now (a stopped one counts until its process has stopped it). */
  running(): number {
    return [...this.processes].filter((p) => p.job !== undefined).length;
  }

  /** Answers a catalog query over what `listing` shows, with `database` first on the search path. */
  answer(
    sql: string,
    params: readonly unknown[],
    listing: Listing,
    database: string,
    signal?: AbortSignal,
    owner = '',
  ): Promise<CatalogAnswer> {
    if (this.closed) return Promise.reject(new Error('the catalog is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<CatalogAnswer>((resolve, reject) => {
      const id = this.nextId++;
      const job: Job = {
        id,
        request: { type: 'query', id, sql, params: [...params], listing, database },
        owner,
        signal,
        settled: false,
        resolve,
        reject,
        cleanup: [],
      };
      // Waiting its turn: a cancel or the deadline takes it out of the queue.
      const leave = (error: unknown) => {
        const at = this.queue.indexOf(job);
        if (at < 0) return;
        this.queue.splice(at, 1);
        settle(job, { error });
      };
      const timer = setTimeout(
        () =>
          leave(
            new CatalogLimitExceeded(
              'time',
              `canceling statement due to statement timeout: no catalog process was free within ${this.limits.timeoutMs} ms`,
            ),
          ),
        this.limits.timeoutMs,
      );
      const onAbort = () => leave(signal!.reason);
      signal?.addEventListener('abort', onAbort);
      const waiting = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      job.cleanup.push(waiting);
      this.queue.push(job);
      this.pump();
      // Taken by a process: no longer waiting (its deadline is the process's now).
      if (!this.queue.includes(job)) waiting();
    });
  }

  private holds(owner: string) {
    return [...this.processes].filter((p) => p.job?.owner === owner).length;
  }

  /** Hands waiting queries to free (or new) processes, oldest first, within each owner's share. */
  private pump() {
    const share = Math.max(1, this.limits.processes - 1);
    for (let i = 0; i < this.queue.length;) {
      const job = this.queue[i]!;
      if (job.owner !== '' && this.holds(job.owner) >= share) {
        i++;
        continue;
      }
      const shadow = this.idle.pop() ?? this.spawn();
      if (!shadow) return;
      this.queue.splice(i, 1);
      for (const c of job.cleanup.splice(0)) c();
      void shadow.run(job);
    }
  }

  private spawn(): ShadowProcess | undefined {
    if (this.closed || this.processes.size >= this.limits.processes) return undefined;
    const shadow = new ShadowProcess(
      this.limits,
      (p) => {
        if (this.closed) return p.kill();
        p.idle(this.processes.size > 1);
        this.idle.push(p);
        this.pump();
      },
      (p) => {
        this.processes.delete(p);
        const at = this.idle.indexOf(p);
        if (at >= 0) this.idle.splice(at, 1);
        if (!this.closed) this.pump();
      },
    );
    this.processes.add(shadow);
    return shadow;
  }

  async close() {
    this.closed = true;
    for (const job of this.queue.splice(0)) settle(job, { error: new Error('the catalog is closed') });
    const exits = [...this.processes].map(
      (p) => new Promise<void>((resolve) => (p.gone ? resolve() : p.child.once('exit', () => resolve()))),
    );
    for (const p of this.processes) p.kill();
    await Promise.all(exits);
  }
}
