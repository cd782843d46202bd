/**
 * Grafana's PostgreSQL data source fills its query builder's pickers with metadata queries: the
 * server version, TimescaleDB's presence, the schemas, a schema's tables (or every table, those on
 * the search path unqualified) and a table's columns. The table and column queries call PostgreSQL's
 * catalog functions (quote_ident, parse_ident) and read the search path through string_to_array and
 * generate_series in FROM: the door answers them from its catalog shadow, with what the engine lists.
 * The texts below are what Grafana's postgresMetaQuery.ts builds (same clauses, same functions).
 */
import type pg from 'pg';
import { catalogText, readsCatalog } from '../../src/pgwire/catalog/shadowCatalog';
import { readStatements } from '../../src/pgwire/session/pgText';
import { startPgFront, type PgFront } from './support';

const EXCLUDED = `('information_schema', 'pg_catalog', '_timescaledb_cache', '_timescaledb_catalog',
  '_timescaledb_internal', '_timescaledb_config', 'timescaledb_information', 'timescaledb_experimental')`;

/** Grafana's test of whether a schema is on the search path. */
const ON_SEARCH_PATH = `quote_ident(table_schema) IN (
  SELECT CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
  FROM generate_series(
      array_lower(string_to_array(current_setting('search_path'),','),1),
      array_upper(string_to_array(current_setting('search_path'),','),1)
    ) as i,
    string_to_array(current_setting('search_path'),',') s
  )`;

const grafana = {
  version: `SELECT current_setting('server_version_num')::int/100 as version`,
  timescale: `SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'`,
  schemas: `SELECT schema_name AS "name" FROM information_schema.schemata
    WHERE schema_name NOT IN ('information_schema', 'pg_catalog', 'pg_toast') ORDER BY schema_name`,
  tablesOf: (schema: string) => `SELECT quote_ident(table_name) AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) = '${schema.replace(/'/g, "''")}'
    ORDER BY 1`,
  tables: `SELECT
    CASE WHEN ${ON_SEARCH_PATH}
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ${EXCLUDED}
    ORDER BY CASE WHEN ${ON_SEARCH_PATH} THEN 0 ELSE 1 END, 1`,
  columns: (table: string) => {
    const t = `'${table.replace(/'/g, "''")}'`;
    return `SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident(${t}),1) = 2
        THEN quote_ident(table_schema) = (parse_ident(${t}))[1]
          AND quote_ident(table_name) = (parse_ident(${t}))[2]
        ELSE quote_ident(table_name) = ${t}
          AND ${ON_SEARCH_PATH}
      END`;
  },
};

describe("Grafana's metadata queries over the PostgreSQL door", () => {
  let front: PgFront;
  let client: pg.Client;

  beforeAll(async () => {
    front = await startPgFront();
    await front.app.http.post('/api/projects').send({ name: 'shop' }).expect(201);
    await front.app.http
      .put('/api/files/sales')
      .attach(
        'file',
        Buffer.from(
          'id,region,amount,sold_at\n1,north,9.5,2026-01-02 03:04:05\n2,south,3.25,2026-02-03 10:11:12\n',
        ),
        'sales.csv',
      )
      .expect(200);
    client = await front.connect({ database: 'shop' });
  }, 60_000);

  afterAll(() => front.dispose());

  const rowsOf = async (sql: string) => (await client.query(sql)).rows as Record<string, unknown>[];

  it('given a connection, when Grafana asks the version and for TimescaleDB, then 16 and no extension', async () => {
    expect(await rowsOf(grafana.version)).toEqual([{ version: 1600 }]);
    expect(await rowsOf(grafana.timescale)).toEqual([]);
  });

  it('given projects and a file, when Grafana lists schemas, then the engine answers with them', async () => {
    const names = (await rowsOf(grafana.schemas)).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['files', 'mindsdb', 'shop']));
  });

  it("given a schema, when Grafana lists its tables, then they are the engine's tables of it", async () => {
    expect(await rowsOf(grafana.tablesOf('files'))).toEqual([{ table: 'sales' }]);
    const shop = (await rowsOf(grafana.tablesOf('shop'))).map((r) => r.table);
    const engine = await front.app.running.sql.execute(
      "SELECT DISTINCT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop'",
      {},
      {},
    );
    expect(engine.type).toBe('table');
    const listed = (engine as { data: unknown[][] }).data.map((r) => String(r[0]).toLowerCase());
    expect(listed.length).toBeGreaterThan(3);
    expect(shop).toEqual([...listed].sort());
  });

  it("given the search path, when Grafana lists every table, then the connection's project comes first and unqualified, the others qualified, the shadow's machinery nowhere", async () => {
    const tables = (await rowsOf(grafana.tables)).map((r) => String(r.table));
    expect(tables).toEqual(expect.arrayContaining(['skills', 'files.sales', 'mindsdb.models']));
    const firstQualified = tables.findIndex((t) => t.includes('.'));
    expect(firstQualified).toBeGreaterThan(0);
    expect(tables.slice(firstQualified).every((t) => t.includes('.'))).toBe(true);
    expect(tables.filter((t) => /pg_mindledger|^main\.|information_schema/.test(t))).toEqual([]);
  });

  it("given a table, when Grafana asks its columns, qualified or by the search path, then PostgreSQL's type names", async () => {
    const expected = [
      { column: 'id', type: 'bigint' },
      { column: 'region', type: 'text' },
      { column: 'amount', type: 'double precision' },
      { column: 'sold_at', type: 'timestamp without time zone' },
    ];
    expect(await rowsOf(grafana.columns('files.sales'))).toEqual(expected);
    // As Grafana passes a name it quoted (parse_ident undoes the quotes and folds the rest).
    expect(await rowsOf(grafana.columns('FILES."sales"'))).toEqual(expected);
    const onPath = await front.connect({ database: 'files' });
    expect((await onPath.query(grafana.columns('sales'))).rows).toEqual(expected);
    // Not on the search path and not qualified: nothing, as PostgreSQL answers.
    expect(await rowsOf(grafana.columns('sales'))).toEqual([]);
  });

  it('given the same metadata queries, then only those calling catalog functions go to the shadow; plain information_schema reads stay with the engine', () => {
    const routed = (sql: string) => readsCatalog(readStatements(sql)[0]!.words);
    expect(routed(grafana.tables)).toBe(true);
    expect(routed(grafana.tablesOf('files'))).toBe(true);
    expect(routed(grafana.columns('files.sales'))).toBe(true);
    expect(routed(grafana.schemas)).toBe(false);
    expect(routed('SELECT table_name FROM information_schema.tables')).toBe(false);
    expect(routed('SELECT quote_ident(name) FROM information_schema.models')).toBe(false);
    expect(routed('SELECT quote_ident(x) FROM ext_pg.information_schema.tables')).toBe(false);
  });

  it("given PostgreSQL's functions in FROM, then DuckDB's form: the alias names the column, a scalar is one row", () => {
    const squeezed = (s: string) => s.replace(/\s+/g, ' ').trim();
    expect(
      squeezed(catalogText("SELECT s[i] FROM generate_series(1, 2) as i, string_to_array(x, ',') s")),
    ).toBe("SELECT s[i] FROM generate_series(1, 2) as i(i), unnest([string_to_array(x, ',')]) AS s(s)");
    expect(squeezed(catalogText('SELECT t.table_name FROM information_schema.tables t'))).toBe(
      'SELECT t.table_name FROM pg_mindledger.information_schema_tables t',
    );
    expect(squeezed(catalogText('SELECT tables.table_name FROM information_schema.tables WHERE 1 = 1'))).toBe(
      'SELECT tables.table_name FROM pg_mindledger.information_schema_tables AS tables WHERE 1 = 1',
    );
    // A column list, a select list's alias and an external database's own catalog stay as written.
    for (const sql of [
      'SELECT * FROM generate_series(1, 2) AS g(n)',
      "SELECT string_to_array(x, ',') s FROM t",
      'SELECT * FROM ext.information_schema.tables',
    ])
      expect(squeezed(catalogText(sql))).toBe(sql);
  });
});
