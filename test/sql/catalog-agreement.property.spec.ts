/**
 * Issue 58, item 4, "One catalog": every path a SQL user lists relations by answers from one
 * listing (src/sql/catalogListing.ts), so they agree: information_schema.TABLES and COLUMNS over
 * HTTP; SHOW FULL TABLES and SHOW COLUMNS over the MySQL door; pg_catalog and information_schema over
 * the PostgreSQL door (what psql's `\dt`, `\dv` and `\d` read); MCP's list_tables and
 * describe_table. Each lists the same relations, of the same kind, with the same columns in the same
 * order and the same types.
 *
 * Types are compared after the door's own mapping of the engine's (DuckDB's) type: the MySQL door
 * shows `mysqlTypeName(t)` (SHOW COLUMNS), the PostgreSQL door `informationSchemaTypeName(t)`
 * (information_schema.columns.data_type); HTTP and MCP show DuckDB's names. Kinds likewise: the
 * PostgreSQL door knows views (relkind 'v') and tables ('r') only, and MCP calls a knowledge base
 * KNOWLEDGE_BASE where SQL says BASE TABLE.
 *
 * First the BI-tool probes that found the disagreements, then the property over generated projects
 * (files, views, models, knowledge bases, agents) beside a PostgreSQL and a MariaDB integration, and
 * its kill check: the checker run against listings broken as the old paths broke them.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import { mysqlTypeName } from '../../src/mysql/session/answers/describe';
import { informationSchemaTypeName } from '../../src/pgwire/catalog/shadowCatalog';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { startDoors, type Doors } from '../support/doors';
import { freshMariaData, freshPostgresData } from '../support/external';
import { propertyRuns, propertySeed } from '../support/seed';
import { call, listen, mcpClient, rowsOf, type Listening } from '../mcp/support';

const SEED = propertySeed();
const NUM_RUNS = 3;

/** One relation as a path lists it: its kind and its columns (name and type, in order). */
type Relation = { kind: string; columns: (readonly [string, string])[] };
/** Every relation a path lists, by `schema.table` (lower case). */
type Listing = Map<string, Relation>;
/** What each path lists, each in its own words (types and kinds as that door names them). */
type Listings = { http: Listing; mysql: Listing; pg: Listing; mcp: Listing };

const key = (schema: unknown, table: unknown) => `${String(schema)}.${String(table)}`.toLowerCase();

/** The kinds each door can say: PostgreSQL's catalog has views and tables only; MCP names knowledge bases. */
const pgKind = (kind: string) => (kind === 'VIEW' ? 'v' : 'r');

/**
 * The property's checker: every door's listing equals the reference (information_schema over
 * HTTP) mapped through that door's own words. `knowledgeBases` are the keys MCP calls
 * KNOWLEDGE_BASE. Answers the differences, none when they agree.
 */
export const disagreements = (l: Listings, knowledgeBases: ReadonlySet<string>): string[] => {
  const expected: Record<Exclude<keyof Listings, 'http'>, Listing> = {
    mysql: new Map(),
    pg: new Map(),
    mcp: new Map(),
  };
  for (const [k, r] of l.http) {
    expected.mysql.set(k, {
      kind: r.kind,
      columns: r.columns.map(([n, t]) => [n, mysqlTypeName(t)] as const),
    });
    expected.pg.set(k, {
      kind: pgKind(r.kind),
      columns: r.columns.map(([n, t]) => [n, informationSchemaTypeName(t)] as const),
    });
    expected.mcp.set(k, {
      kind: knowledgeBases.has(k) && r.kind === 'BASE TABLE' ? 'KNOWLEDGE_BASE' : r.kind,
      columns: r.columns,
    });
  }
  const found: string[] = [];
  for (const door of ['mysql', 'pg', 'mcp'] as const) {
    const want = expected[door];
    const got = l[door];
    for (const k of new Set([...want.keys(), ...got.keys()])) {
      const a = want.get(k);
      const b = got.get(k);
      if (!a) found.push(`${door} lists ${k}, information_schema does not`);
      else if (!b) found.push(`${door} does not list ${k}, information_schema does`);
      else if (JSON.stringify(a) !== JSON.stringify(b))
        found.push(`${door} lists ${k} as ${JSON.stringify(b)}, information_schema as ${JSON.stringify(a)}`);
    }
  }
  return found;
};

/** The external databases' tables: every type family their drivers read. */
const POSTGRES_SETUP = [
  `CREATE TABLE sales (id integer, small smallint, big bigint, amount numeric(10,2), ratio real,
     wide double precision, note text, label varchar(20), sold_on date, at timestamp, at_tz timestamptz,
     paid boolean, doc json, ref uuid)`,
  'CREATE TABLE regions (code text, name text)',
  'CREATE VIEW big_sales AS SELECT id, amount FROM sales',
];
const MARIA_SETUP = [
  `CREATE TABLE orders (id int, qty bigint, tiny tinyint, flag tinyint(1), mid mediumint, price decimal(8,2),
     f float, d double, label varchar(20), body text, day date, at datetime, stamp timestamp NULL, bits bit(1),
     yr year, t time, doc json)`,
  'CREATE TABLE customers (name varchar(40), since date)',
];

type FileSpec = { name: string; columns: { name: string; kind: 'int' | 'float' | 'text' | 'date' }[] };
type World = {
  files: FileSpec[];
  views: { name: string; file: number; columns: number[]; computed: boolean }[];
  model: { file: number; target: number } | null;
  knowledgeBases: { name: string; metadata: string[] }[];
  agent: boolean;
};

const COLUMN_KINDS = ['int', 'float', 'text', 'date'] as const;
const world: fc.Arbitrary<World> = fc
  .array(
    fc
      .uniqueArray(fc.constantFrom(...COLUMN_KINDS), { minLength: 2, maxLength: 4 })
      .map((kinds) => kinds.map((kind, i) => ({ name: `c${i}_${kind}`, kind }))),
    { minLength: 1, maxLength: 2 },
  )
  .chain((files) =>
    fc.record({
      files: fc.constant(files.map((columns, i) => ({ name: `f${i}`, columns }))),
      views: fc.array(
        fc.record({
          file: fc.nat(files.length - 1),
          columns: fc.uniqueArray(fc.nat(1), { minLength: 1, maxLength: 2 }),
          computed: fc.boolean(),
        }),
        { maxLength: 2 },
      ),
      model: fc.option(fc.record({ file: fc.nat(files.length - 1), target: fc.nat(1) }), { nil: null }),
      knowledgeBases: fc.array(fc.subarray(['topic', 'year']), { maxLength: 2 }),
      agent: fc.boolean(),
    }),
  )
  .map((w) => ({
    ...w,
    views: w.views.map((v, i) => ({ ...v, name: `v${i}` })),
    knowledgeBases: w.knowledgeBases.map((metadata, i) => ({ name: `kb${i}`, metadata })),
  }));

const cell = (kind: FileSpec['columns'][number]['kind'], row: number) =>
  ({
    int: String(row * 3 + 1),
    float: (row * 1.5 + 0.25).toFixed(2),
    text: ['red', 'green', 'blue'][row % 3]!,
    date: `2024-01-${String((row % 28) + 1).padStart(2, '0')}`,
  })[kind];

/** Twelve rows: enough for a model to learn from. */
const csvOf = (f: FileSpec) =>
  [
    f.columns.map((c) => c.name).join(','),
    ...Array.from({ length: 12 }, (_, r) => f.columns.map((c) => cell(c.kind, r)).join(',')),
  ].join('\n') + '\n';

describe.each(storeKinds)('one catalog: every path lists the same relations (event store: %s)', (store) => {
  let t: TestApp;
  let doors: Doors;
  let listening: Listening;
  let mcp: Client;
  let externals: { name: string; drop: () => Promise<void> }[] = [];
  let runs = 0;

  const sql = async (query: string): Promise<SqlAnswer> => {
    const answer = await querySql(t, query);
    if (answer.type === 'error') throw new Error(`${query}: ${answer.error_message}`);
    return answer;
  };

  beforeAll(async () => {
    t = await startTestApp(store);
    const pgData = await freshPostgresData(POSTGRES_SETUP);
    const mariaData = await freshMariaData(MARIA_SETUP);
    externals = [pgData, mariaData];
    await sql(
      `CREATE DATABASE ext_pg WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(pgData.parameters)}`,
    );
    await sql(
      `CREATE DATABASE ext_maria WITH ENGINE = 'mysql', PARAMETERS = ${JSON.stringify(mariaData.parameters)}`,
    );
    doors = await startDoors(t, { rowsAsArray: true });
    listening = await listen(t);
    mcp = await mcpClient(listening.url);
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await listening?.close();
    await doors?.close();
    await t?.dispose();
    for (const e of externals) await e.drop();
  });

  /** Builds a world in a project of its own; its uploaded files are named after the project. */
  const build = async (w: World) => {
    const project = `cat_${store}_${++runs}`;
    await sql(`CREATE PROJECT ${project}`);
    const file = (i: number) => `${project}_${w.files[i]!.name}`;
    for (const [i, f] of w.files.entries())
      await t.http
        .put(`/api/files/${file(i)}`)
        .attach('file', Buffer.from(csvOf(f)), `${file(i)}.csv`)
        .expect(200);
    for (const v of w.views) {
      const columns = w.files[v.file]!.columns;
      const picked = v.columns.map((c) => columns[c % columns.length]!.name);
      const computed = v.computed ? `, ${picked[0]} IS NULL AS missing, 'x' || ${picked[0]} AS spelled` : '';
      await sql(
        `CREATE VIEW ${project}.${v.name} AS (SELECT ${picked.join(', ')}${computed} FROM files.${file(v.file)})`,
      );
    }
    if (w.model) {
      const columns = w.files[w.model.file]!.columns;
      const target = columns[w.model.target % columns.length]!.name;
      // Trained or failed, a model is listed: its columns are its features and its target at least.
      await querySql(
        t,
        `CREATE MODEL ${project}.m FROM files (SELECT ${columns.map((c) => c.name).join(', ')} FROM ${file(w.model.file)}) PREDICT ${target} USING join_learn_process = true`,
      );
    }
    for (const kb of w.knowledgeBases)
      await sql(
        `CREATE KNOWLEDGE_BASE ${project}.${kb.name} USING ${kb.metadata.length > 0 ? `metadata_columns = [${kb.metadata.map((m) => `'${m}'`).join(', ')}], ` : ''}content_columns = ['content'], id_column = 'id'`,
      );
    if (w.agent)
      await t.http
        .post(`/api/projects/${project}/agents`)
        .send({
          agent: { name: 'helper', model: { model_name: 'gpt-test', provider: 'openai', api_key: 'k' } },
        })
        .expect(201);
    return { project, files: w.files.map((_, i) => file(i)) };
  };

  /** Every path's listing of the given databases (and, of `files`, of the given files). */
  const listingsOf = async (databases: string[], files: string[]) => {
    const inScope = (schema: unknown, table: unknown) =>
      String(schema).toLowerCase() === 'files'
        ? files.includes(String(table).toLowerCase())
        : databases.includes(String(schema).toLowerCase());
    const schemas = [...databases, 'files'].map((d) => `'${d}'`).join(', ');

    // The four paths are read side by side (each over its own connection; nothing changes meanwhile):
    // their answers wait on DuckDB, PostgreSQL and MariaDB as much as on this process.

    // HTTP: information_schema.TABLES and COLUMNS, the reference.
    const httpListing = async () => {
      const http: Listing = new Map();
      const tables = await sql(
        `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (${schemas})`,
      );
      for (const [s, n, kind] of tables.data!)
        if (inScope(s, n)) http.set(key(s, n), { kind: String(kind), columns: [] });
      const columns = await sql(
        `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN (${schemas}) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
      );
      for (const [s, n, c, type] of columns.data!)
        if (inScope(s, n))
          (
            http.get(key(s, n)) ??
            http.set(key(s, n), { kind: '(not in TABLES)', columns: [] }).get(key(s, n))!
          ).columns.push([String(c), String(type)]);
      return http;
    };

    // The MySQL door: SHOW FULL TABLES of each database, SHOW COLUMNS of each table.
    const mysqlListing = async () => {
      const my: Listing = new Map();
      for (const db of [...databases, 'files']) {
        const [shown] = await doors.my.query<mysql.RowDataPacket[]>({
          sql: `SHOW FULL TABLES FROM \`${db}\``,
          rowsAsArray: true,
        });
        for (const [n, kind] of shown as unknown as unknown[][]) {
          if (!inScope(db, n)) continue;
          const [fields] = await doors.my.query<mysql.RowDataPacket[]>({
            sql: `SHOW COLUMNS FROM \`${db}\`.\`${String(n)}\``,
            rowsAsArray: true,
          });
          my.set(key(db, n), {
            kind: String(kind),
            columns: (fields as unknown as unknown[][]).map((f) => [String(f[0]), String(f[1])] as const),
          });
        }
      }
      return my;
    };

    // The PostgreSQL door: pg_class (psql's \dt and \dv) and information_schema.columns (\d's columns).
    const pgListing = async () => {
      const pg: Listing = new Map();
      const relations = await doors.pgc.query({
        text: `SELECT n.nspname, c.relname, c.relkind FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind IN ('r', 'v') ORDER BY 1, 2`,
        rowMode: 'array',
      });
      for (const [s, n, kind] of relations.rows as unknown[][])
        if (inScope(s, n)) pg.set(key(s, n), { kind: String(kind), columns: [] });
      const pgColumns = await doors.pgc.query({
        text: `SELECT table_schema, quote_ident(table_name), column_name, data_type FROM information_schema.columns
             ORDER BY table_schema, table_name, ordinal_position`,
        rowMode: 'array',
      });
      for (const [s, n, c, type] of pgColumns.rows as unknown[][])
        if (inScope(s, String(n).replace(/^"|"$/g, '')))
          pg.get(key(s, String(n).replace(/^"|"$/g, '')))?.columns.push([String(c), String(type)]);
      return pg;
    };

    // MCP: list_tables of each database, describe_table of each table (the calls side by side, the
    // listing in the order list_tables answers).
    const mcpListingOf = async () => {
      const mcpListing: Listing = new Map();
      for (const db of [...databases, 'files']) {
        const listed = rowsOf(await call(mcp, 'list_tables', { database: db })).filter((r) =>
          inScope(db, r.Table),
        );
        const described = await Promise.all(
          listed.map(async (r) =>
            rowsOf(await call(mcp, 'describe_table', { database: db, table: String(r.Table) })),
          ),
        );
        for (const [i, r] of listed.entries())
          mcpListing.set(key(db, r.Table), {
            kind: String(r.Table_type),
            columns: described[i]!.map((d) => [String(d.column), String(d.type)] as const),
          });
      }
      return mcpListing;
    };

    const [http, my, pg, mcpListing] = await Promise.all([
      httpListing(),
      mysqlListing(),
      pgListing(),
      mcpListingOf(),
    ]);
    return { http, mysql: my, pg, mcp: mcpListing };
  };

  const knowledgeBasesOf = async (project: string) =>
    new Set(
      (
        await sql(`SELECT NAME FROM information_schema.KNOWLEDGE_BASES WHERE PROJECT = '${project}'`)
      ).data!.map((r) => key(project, r[0])),
    );

  describe('the BI-tool probes', () => {
    let listings: Listings;
    let project: string;
    beforeAll(async () => {
      const built = await build({
        files: [
          {
            name: 'f0',
            columns: [
              { name: 'n', kind: 'int' },
              { name: 'x', kind: 'float' },
              { name: 'colour', kind: 'text' },
            ],
          },
        ],
        views: [{ name: 'v0', file: 0, columns: [0, 1], computed: false }],
        model: { file: 0, target: 1 },
        knowledgeBases: [{ name: 'kb0', metadata: ['topic'] }],
        agent: true,
      });
      project = built.project;
      listings = await listingsOf([project, 'ext_pg', 'ext_maria'], built.files);
    }, 120_000);

    it('given external integrations, when a BI tool reads information_schema.TABLES, then it lists their tables as COLUMNS, SHOW TABLES and \\dt do', () => {
      for (const table of [
        'ext_pg.sales',
        'ext_pg.regions',
        'ext_pg.big_sales',
        'ext_maria.orders',
        'ext_maria.customers',
      ]) {
        expect({ table, kind: listings.http.get(table)?.kind }).toEqual({ table, kind: 'BASE TABLE' });
        expect({ table, kind: listings.mysql.get(table)?.kind }).toEqual({ table, kind: 'BASE TABLE' });
        expect({ table, kind: listings.pg.get(table)?.kind }).toEqual({ table, kind: 'r' });
      }
    });

    it('given a trained model, when SHOW TABLES FROM its project is read, then it lists the model as MCP does, MODEL', () => {
      expect(listings.mysql.get(`${project}.m`)?.kind).toBe('MODEL');
      expect(listings.mcp.get(`${project}.m`)?.kind).toBe('MODEL');
      expect(listings.http.get(`${project}.m`)?.kind).toBe('MODEL');
    });

    it('given a model, when MCP describes it, then its numeric features are typed as it learnt them, as every door lists them', () => {
      const described = listings.mcp.get(`${project}.m`)!.columns;
      expect(described.slice(0, 2)).toEqual([
        ['n', 'BIGINT'],
        ['colour', 'VARCHAR'],
      ]);
      expect(listings.http.get(`${project}.m`)!.columns).toEqual(described);
      expect(listings.mysql.get(`${project}.m`)!.columns.slice(0, 1)).toEqual([['n', 'bigint']]);
    });

    it('given external tables, when \\d reads their columns, then they carry the types a SELECT of them answers', async () => {
      const selected = await sql('SELECT * FROM ext_pg.sales LIMIT 0');
      expect(listings.http.get('ext_pg.sales')!.columns).toEqual(
        selected.column_names!.map((c, i) => [c, selected.column_types![i]]),
      );
      expect(listings.pg.get('ext_pg.sales')!.columns.slice(0, 4)).toEqual([
        ['id', 'bigint'],
        ['small', 'bigint'],
        ['big', 'bigint'],
        ['amount', 'double precision'],
      ]);
    });

    it('given the probe world, when every path lists it, then they agree', async () => {
      expect(disagreements(listings, await knowledgeBasesOf(project))).toEqual([]);
    });

    it('kill check: the checker fails on the listings the old paths gave', async () => {
      const kbs = await knowledgeBasesOf(project);
      const broken = (door: keyof Listings, change: (l: Listing) => void): Listings => {
        const copy = Object.fromEntries(
          Object.entries(listings).map(([d, l]) => [
            d,
            new Map([...l].map(([k, r]) => [k, { ...r, columns: [...r.columns] }])),
          ]),
        ) as Listings;
        change(copy[door]);
        return copy;
      };
      // information_schema.TABLES without the integrations' tables (COLUMNS still listing them).
      expect(
        disagreements(
          broken('http', (l) => {
            for (const [k, r] of l) if (k.startsWith('ext_')) l.set(k, { ...r, kind: '(not in TABLES)' });
          }),
          kbs,
        ),
      ).not.toEqual([]);
      // SHOW TABLES FROM a project without its models.
      expect(
        disagreements(
          broken('mysql', (l) => l.delete(`${project}.m`)),
          kbs,
        ),
      ).not.toEqual([]);
      // describe_table typing a model's numeric features VARCHAR.
      expect(
        disagreements(
          broken('mcp', (l) => {
            const m = l.get(`${project}.m`)!;
            m.columns = m.columns.map(([n, type]) => [n, type === 'BIGINT' ? 'VARCHAR' : type] as const);
          }),
          kbs,
        ),
      ).not.toEqual([]);
      // COLUMNS naming an external column's type in its database's own words.
      expect(
        disagreements(
          broken('http', (l) => {
            const s = l.get('ext_pg.sales')!;
            s.columns = s.columns.map(([n, type]) => [n, n === 'id' ? 'integer' : type] as const);
          }),
          kbs,
        ),
      ).not.toEqual([]);
    });
  });

  it('given generated projects beside a PostgreSQL and a MariaDB integration, every path lists the same relations with the same columns and types', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const { project, files } = await build(w);
        const listings = await listingsOf([project, 'ext_pg', 'ext_maria'], files);
        expect({
          project,
          world: w,
          disagreements: disagreements(listings, await knowledgeBasesOf(project)),
        }).toEqual({
          project,
          world: w,
          disagreements: [],
        });
        // Everything the world made is listed (an agent is not a relation any path lists).
        const listed = [...listings.http.keys()];
        expect(listed).toEqual(
          expect.arrayContaining([
            ...files.map((f) => `files.${f}`),
            ...w.views.map((v) => `${project}.${v.name}`),
            ...w.knowledgeBases.map((k) => `${project}.${k.name}`),
            ...(w.model ? [`${project}.m`] : []),
          ]),
        );
        expect(listed).not.toContain(`${project}.helper`);
      }),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  }, 300_000);
});
