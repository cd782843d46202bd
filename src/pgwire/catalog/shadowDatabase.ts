import { inTransaction } from '../../duckdb/transaction';
import { quoteIdent, quoteString } from '../../shared/quoting';
import { DuckDBInstance, StatementType, type DuckDBConnection } from '@duckdb/node-api';
import { CatalogRefusal, catalogText, SHIMS, type CatalogAnswer, type Listing } from './shadowCatalog';

/**
 * The catalog shadow's DuckDB (see shadowCatalog.ts): an in-memory database holding what a client
 * may see as empty tables, and the shims. It runs in a process of its own (shadowProcess.ts), one
 * query at a time: its server (ShadowCatalog) bounds that process's time and memory, which DuckDB
 * alone cannot (its interrupt is seen between chunks, its memory_limit covers only what its buffer
 * manager holds, not a list or string one function call builds).
 */

const literal = quoteString;

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
const quoted = quoteIdent;

/** Types the shadow's tables take: the engine's DuckDB type names, any DuckDB cannot read again as text. */
const columnType = (type: string) =>
  /^[A-Z][A-Z0-9_ ]*(\(\d+(,\s*\d+)?\))?(\[\])?$/.test(type) ? type : 'VARCHAR';

export type ShadowDatabaseOptions = {
  /** DuckDB's memory_limit, in MiB. */
  memoryMb: number;
  /** Past this many rows an answer is refused, not cut. */
  maxRows: number;
};

export class ShadowDatabase {
  private instance: Promise<DuckDBInstance> | undefined;
  private built = '';
  private current: DuckDBConnection | undefined;

  constructor(private readonly o: ShadowDatabaseOptions) {}

  private async connect(): Promise<DuckDBConnection> {
    this.instance ??= (async () => {
      // Clients' own SELECTs run here: no files, no extensions, no attaching, and no SET can undo that.
      const instance = await DuckDBInstance.create(':memory:', {
        threads: '1',
        memory_limit: `${this.o.memoryMb}MB`,
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

  /** Ready to answer (the instance made and its shims in place). */
  async open() {
    (await this.connect()).closeSync();
  }

  private async rebuild(c: DuckDBConnection, listing: Listing) {
    const fingerprint = JSON.stringify(listing);
    if (fingerprint === this.built) return;
    // Until this rebuild has committed, no listing is known to be in place (an interrupted or
    // failed one is redone by the next query, never served).
    this.built = '';
    await inTransaction(c, async () => {
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
      const tables = new Map<
        string,
        { schema: string; table: string; columns: Map<string, Listing['columns'][number]> }
      >();
      for (const col of listing.columns) {
        const schema = schemas.get(folded(col.schema));
        if (schema === undefined) continue;
        const key = folded(col.schema, col.table);
        const table = tables.get(key) ?? { schema, table: col.table, columns: new Map() };
        tables.set(key, table);
        if (!table.columns.has(folded(col.column))) table.columns.set(folded(col.column), col);
      }
      for (const schema of schemas.values()) await c.run(`CREATE SCHEMA IF NOT EXISTS ${quoted(schema)}`);
      const views = new Map(listing.views.map((v) => [folded(v.schema, v.table), v]));
      await c.run('DELETE FROM pg_mindledger.view_definitions');
      for (const [key, { schema, table, columns }] of tables) {
        const view = views.get(key);
        if (view) {
          // A view: an empty SELECT of its columns, so pg_class says 'v' (psql's \dv) and pg_attribute lists them.
          const list = [...columns.values()]
            .map((col) => `NULL::${columnType(col.type)} AS ${quoted(col.column)}`)
            .join(', ');
          await c.run(`CREATE VIEW ${quoted(schema)}.${quoted(table)} AS SELECT ${list} WHERE false`);
          await c.run(
            `INSERT INTO pg_mindledger.view_definitions VALUES (${literal(schema)}, ${literal(table)}, ${view.definition === null ? 'NULL' : literal(view.definition)})`,
          );
          continue;
        }
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
    });
    this.built = fingerprint;
  }

  /** Interrupts the query running now, if any (DuckDB sees it between chunks). */
  interrupt() {
    this.current?.interrupt();
  }

  /**
   * Answers a catalog query over what `listing` shows, with `database` first on the search path.
   * `started` is called once the listing is in place, right before the client's SELECT runs.
   * One query at a time: the caller waits for the answer before it sends another.
   */
  async answer(
    sql: string,
    params: readonly unknown[],
    listing: Listing,
    database: string,
    started: () => void = () => undefined,
  ): Promise<CatalogAnswer> {
    const c = await this.connect();
    this.current = c;
    try {
      await this.rebuild(c, listing);
      const path = [database, 'pg_mindledger'].filter(
        (s) => s === 'pg_mindledger' || listing.databases.includes(s),
      );
      await c.run(`SET search_path = ${quoteString(path.join(','))}`);
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
      started();
      // At most maxRows + 1 rows are read: past maxRows the answer is refused, not cut.
      const result = await prepared.runAndReadUntil(this.o.maxRows + 1);
      if (result.currentRowCount > this.o.maxRows)
        throw new CatalogRefusal(`a catalog query answers at most ${this.o.maxRows} rows`);
      return {
        columnNames: result.columnNames(),
        columnTypes: result.columnTypes().map((t) => t.toString()),
        rows: result.getRowsJson() as unknown[][],
      };
    } finally {
      this.current = undefined;
      c.closeSync();
    }
  }

  async close() {
    const instance = await this.instance;
    instance?.closeSync();
  }
}
