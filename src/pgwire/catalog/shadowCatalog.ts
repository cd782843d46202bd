import { DuckDBInstance, StatementType, type DuckDBConnection } from '@duckdb/node-api';
import { isKeyword, significant, textOf, tokenize } from '../../shared/sqlTokens';
import { NAMED_DUCKDB_TYPES, Oid, pgTypeOf } from '../protocol/types';
import { fromFunctionEdits, isRelationAlias } from './fromFunctions';

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
export type ListedColumn = { schema: string; table: string; column: string; type: string };

/** What the engine lists: its databases (some without tables) and their tables' columns. */
export type Listing = { databases: string[]; columns: ListedColumn[] };

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

/** What DuckDB's pg_catalog lacks and psql and SQLAlchemy use; empty relations where there is nothing to list. */
const SHIMS = [
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
  `CREATE VIEW pg_mindledger.pg_class AS SELECT *, false AS relforcerowsecurity FROM pg_catalog.pg_class WHERE relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE pg_mindledger.hidden(nspname))`,
  `CREATE VIEW pg_mindledger.pg_tables AS SELECT * FROM pg_catalog.pg_tables WHERE NOT pg_mindledger.hidden(schemaname)`,
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

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

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
 * Relations that are always empty here (no publications, policies, triggers, inheritance …). psql
 * asks about them with PostgreSQL-only constructs DuckDB cannot bind (`prattrs[s]` over a
 * generate_series alias); such a query, when it fails, is answered with no rows, which is what it
 * would return.
 */
const EMPTY_RELATIONS = [
  'pg_publication',
  'pg_policy',
  'pg_statistic_ext',
  'pg_inherits',
  'pg_trigger',
  'pg_rewrite',
  'pg_event_trigger',
];
const readsOnlyEmpty = (sql: string) => EMPTY_RELATIONS.some((r) => new RegExp(`\\b${r}\\b`, 'i').test(sql));

/** DuckDB's text of a name. */
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

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
      const aliased = isKeyword(sql, words[i + 3], 'AS') || isRelationAlias(sql, words[i + 3]);
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

/** Types the shadow's tables take: the engine's DuckDB type names, any DuckDB cannot read again as text. */
const columnType = (type: string) =>
  /^[A-Z][A-Z0-9_ ]*(\(\d+(,\s*\d+)?\))?(\[\])?$/.test(type) ? type : 'VARCHAR';

/** A catalog query this server does not run (more than one statement, not a SELECT, too large). */
export class CatalogRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogRefusal';
  }
}

export type CatalogLimits = {
  /** A catalog query running longer is interrupted (the shadow is shared: one query at a time). */
  timeoutMs: number;
  maxRows: number;
};

export class ShadowCatalog {
  constructor(private readonly limits: CatalogLimits = { timeoutMs: 10_000, maxRows: 100_000 }) {}

  private instance: Promise<DuckDBInstance> | undefined;
  private built = '';
  /** One catalog query (and rebuild) at a time: the shadow is shared by every connection. */
  private turn: Promise<unknown> = Promise.resolve();

  private async connect(): Promise<DuckDBConnection> {
    this.instance ??= (async () => {
      // Clients' own SELECTs run here: no files, no extensions, no attaching, and no SET can undo that.
      const instance = await DuckDBInstance.create(':memory:', {
        threads: '1',
        memory_limit: '128MB',
        enable_external_access: 'false',
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
      });
      const c = await instance.connect();
      await c.run('CREATE SCHEMA pg_mindledger');
      for (const shim of SHIMS) await c.run(shim);
      await c.run('SET lock_configuration = true');
      c.closeSync();
      return instance;
    })();
    return (await this.instance).connect();
  }

  private async rebuild(c: DuckDBConnection, listing: Listing) {
    const fingerprint = JSON.stringify(listing);
    if (fingerprint === this.built) return;
    // Until this rebuild has committed, no listing is known to be in place (an interrupted or
    // failed one is redone by the next query, never served).
    this.built = '';
    await c.run('BEGIN TRANSACTION');
    try {
      const existing = await c.runAndReadAll(
        `SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database() AND NOT internal AND schema_name <> 'pg_mindledger'`,
      );
      for (const [schema] of existing.getRows()) await c.run(`DROP SCHEMA ${quoted(String(schema))} CASCADE`);
      // DuckDB's names are case-insensitive: of names differing only in case, the first is kept
      // (an external database may hold both "Users" and "users").
      const folded = (...names: string[]) => JSON.stringify(names.map((n) => n.toLowerCase()));
      const schemas = new Map<string, string>();
      for (const name of [...listing.databases, ...listing.columns.map((col) => col.schema)])
        if (name.toLowerCase() !== 'information_schema' && !schemas.has(folded(name)))
          schemas.set(folded(name), name);
      const tables = new Map<string, { schema: string; table: string; columns: Map<string, ListedColumn> }>();
      for (const col of listing.columns) {
        const schema = schemas.get(folded(col.schema));
        if (schema === undefined) continue;
        const key = folded(col.schema, col.table);
        const table = tables.get(key) ?? { schema, table: col.table, columns: new Map() };
        tables.set(key, table);
        if (!table.columns.has(folded(col.column))) table.columns.set(folded(col.column), col);
      }
      for (const schema of schemas.values()) await c.run(`CREATE SCHEMA IF NOT EXISTS ${quoted(schema)}`);
      for (const { schema, table, columns } of tables.values()) {
        const list = [...columns.values()]
          .map((col) => `${quoted(col.column)} ${columnType(col.type)}`)
          .join(', ');
        await c.run(`CREATE TABLE ${quoted(schema)}.${quoted(table)} (${list})`);
      }
      await c.run('DELETE FROM pg_mindledger.pg_database');
      let oid = 16384;
      for (const name of listing.databases)
        await c.run(
          `INSERT INTO pg_mindledger.pg_database VALUES (${oid++}, ${literal(name)}, 10, 6, 'c', false, true, -1, 'C', 'C', NULL, NULL, NULL, 1663)`,
        );
      await c.run('COMMIT');
    } catch (error) {
      await c.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    this.built = fingerprint;
  }

  /** Answers a catalog query over what `listing` shows, with `database` first on the search path. */
  answer(
    sql: string,
    params: readonly unknown[],
    listing: Listing,
    database: string,
    signal?: AbortSignal,
  ): Promise<CatalogAnswer> {
    const run = this.turn.then(async () => {
      // Cancelled while waiting its turn: it does not run.
      signal?.throwIfAborted();
      const c = await this.connect();
      // A cancel (or the client leaving) interrupts the query: the shadow is shared, one at a time.
      const interrupt = () => c.interrupt();
      signal?.addEventListener('abort', interrupt);
      try {
        await this.rebuild(c, listing);
        const path = [database, 'pg_mindledger'].filter(
          (s) => s === 'pg_mindledger' || listing.databases.includes(s),
        );
        await c.run(`SET search_path = '${path.map((p) => p.replace(/'/g, "''")).join(',')}'`);
        const text = catalogText(sql);
        // Exactly one statement, and a SELECT: DuckDB splits text its own way (comments ending at
        // \r, nested /* */), so what reached here as one SELECT is checked again by DuckDB itself.
        const extracted = await c.extractStatements(text);
        if (extracted.count !== 1) throw new CatalogRefusal('a catalog query is one SELECT statement');
        let prepared;
        try {
          prepared = await extracted.prepare(0);
        } catch (error) {
          if (readsOnlyEmpty(sql)) return { columnNames: [], columnTypes: [], rows: [] };
          throw error;
        }
        if (prepared.statementType !== StatementType.SELECT)
          throw new CatalogRefusal('a catalog query is one SELECT statement');
        if (params.length)
          prepared.bind(
            params.map((p) => (p === undefined ? null : p)) as (string | number | boolean | null)[],
          );
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          c.interrupt();
        }, this.limits.timeoutMs);
        try {
          // At most maxRows + 1 rows are read: past maxRows the answer is refused, not cut.
          const result = await prepared.runAndReadUntil(this.limits.maxRows + 1).catch((error: unknown) => {
            throw timedOut
              ? new CatalogRefusal(`a catalog query runs at most ${this.limits.timeoutMs} ms`)
              : error;
          });
          if (result.currentRowCount > this.limits.maxRows)
            throw new CatalogRefusal(`a catalog query answers at most ${this.limits.maxRows} rows`);
          return {
            columnNames: result.columnNames(),
            columnTypes: result.columnTypes().map((t) => t.toString()),
            rows: result.getRowsJson() as unknown[][],
          };
        } finally {
          clearTimeout(timer);
        }
      } finally {
        signal?.removeEventListener('abort', interrupt);
        c.closeSync();
      }
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  async close() {
    const instance = await this.instance;
    instance?.closeSync();
  }
}
