/**
 * The promise: the SQL endpoint over uploaded files is DuckDB. A SELECT over files answers exactly
 * the rows (and column types) a plain in-memory DuckDB answers for the same SQL text over the same
 * CSV files, read with the options the service records for them (src/files/load.ts: `read_csv` with
 * `all_varchar`, the sniffed dialect, then `TRY_CAST(nullif(trim(col), '') AS <type>)` per typed
 * column). Generated files hold integers, doubles, text, booleans and dates with NULLs; generated
 * SELECTs filter (NULLs, AND/OR/NOT, comparisons, IS NULL, BETWEEN, IN, LIKE), join two files,
 * aggregate with GROUP BY, use window functions, and order by every output column with a LIMIT.
 * Rows are compared as multisets unless the query orders every output column (then as sequences).
 *
 * And SQLancer's ternary logic partitioning, through the endpoint alone: for a generated predicate
 * p, the rows of `SELECT … FROM …` are the multiset union of those of `… WHERE p`,
 * `… WHERE NOT (p)` and `… WHERE (p) IS NULL`.
 *
 * How cells are compared (the endpoint's rendering, src/sql/values.ts; DuckDB's JSON form is
 * brought to it here, independently):
 *
 * | DuckDB type                | endpoint cell                  | plain DuckDB (`getRowsJson`) → cell |
 * | -------------------------- | ------------------------------ | ----------------------------------- |
 * | BIGINT, HUGEINT, INTEGER … | number (digits when unsafe)    | digits → number when safe           |
 * | DOUBLE                     | number; NaN, ±Infinity → null  | number; "NaN", "±Infinity" → null   |
 * | DECIMAL(p,s)               | number                         | digits → number                     |
 * | DATE                       | `YYYY-MM-DD`                   | as is                               |
 * | BOOLEAN, VARCHAR           | as is                          | as is                               |
 *
 * Both sides then: doubles rounded to 12 significant digits (sums of doubles may associate
 * differently), and -0 read as 0 (JSON has no negative zero). In the CSV, an empty field and a
 * quoted empty string both read as NULL (DuckDB's `allow_quoted_nulls`), so no text cell is empty.
 *
 * Beside it, a kill check: integer cells always sent as their digits (the safe-integer test left
 * out: a number JavaScript holds exactly sent as text too) is caught at the count `npm test` runs.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import {
  anySelect,
  DUCKDB_TYPE,
  fromClause,
  generatedTable,
  plainSelect,
  sqlOver,
  writeCsv,
  type GeneratedTable,
} from '../support/generatedSql';
import { eventsOf, givenFile, uniqueName } from '../support/world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
/**
 * Halved from 30 (issue 62) once the kill check below caught its bug at 15 runs on every one of 20
 * fresh seeds. Each run uploads two generated files (about half a run's time) and asks four
 * generated SELECTs and one partitioned in three; each run's fresh seed draws new ones, and
 * `npm run test:deep` runs ten times as many.
 */
const NUM_RUNS = 15;
const QUERIES_PER_RUN = 4;

type Cell = unknown;
type Answer = { ok: true; types: string[]; rows: Cell[][] } | { ok: false; error: string };

const isInteger = (t: string) => /^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$/.test(t);
const isDouble = (t: string) => t === 'DOUBLE' || t === 'FLOAT';

/** Plain DuckDB's JSON cell as the endpoint renders it (the table above). */
const fromDuckJson = (type: string, v: unknown): Cell => {
  if (v === null) return null;
  if (isInteger(type)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : String(v);
  }
  if (isDouble(type)) return typeof v === 'number' ? v : null;
  if (type.startsWith('DECIMAL')) return Number(v);
  return v;
};

/** What both sides go through before comparing: doubles to 12 digits, -0 as 0. */
const comparable = (types: string[], row: Cell[]) =>
  row.map((v, i) => {
    if (typeof v !== 'number') return v;
    const rounded = isDouble(types[i]!) || types[i]!.startsWith('DECIMAL') ? Number(v.toPrecision(12)) : v;
    return rounded === 0 ? 0 : rounded;
  });

const key = (row: Cell[]) => JSON.stringify(row);
const multiset = (rows: Cell[][]) => rows.map(key).sort();

/** Rows in order when the query orders them totally, else as a sorted multiset. */
const shapeOf = (a: Answer, ordered: boolean) =>
  a.ok ? { types: a.types, rows: ordered ? a.rows.map(key) : multiset(a.rows) } : { error: true };

/**
 * The endpoint's integer cells always sent as their digits, safe or not (the kill check's bug).
 * Undone by `mockRestore`.
 */
const integersAsDigits = (engine: TestApp['running']['sql']) => {
  const { execute } = engine;
  return jest.spyOn(engine, 'execute').mockImplementation(async (...args) => {
    const answer = await execute(...args);
    if (answer.type !== 'table') return answer;
    const integer = answer.column_types.map(isInteger);
    return {
      ...answer,
      data: answer.data.map((row) =>
        row.map((v, i) => (integer[i] && typeof v === 'number' ? String(v) : v)),
      ),
    };
  });
};

describe.each(storeKinds)('the SQL endpoint over files equals plain DuckDB (event store: %s)', (store) => {
  let t: TestApp;
  let duck: DuckDBInstance;
  let c: DuckDBConnection;

  beforeAll(async () => {
    t = await startTestApp(store);
    duck = await DuckDBInstance.create(':memory:');
    c = await duck.connect();
    await c.run('CREATE SCHEMA files');
  });
  afterAll(async () => {
    c?.closeSync();
    duck?.closeSync();
    await t?.dispose();
  });

  /**
   * Uploads the table as a file, checks the service inferred the generated types, and loads the same
   * CSV into plain DuckDB with the dialect the service recorded (its FileUploaded event).
   */
  const given = async (table: GeneratedTable) => {
    const name = uniqueName('gen');
    const path = writeCsv(table, name);
    const uploaded = await givenFile(t, path, name);
    expect(uploaded.column_types).toEqual(
      Object.fromEntries(table.columns.map((col) => [col.name, DUCKDB_TYPE[col.kind]])),
    );
    const recorded = (await eventsOf(t, `file-${name}`)).filter((e) => e.type === 'FileUploaded').at(-1)!;
    const d = recorded.data.csv as { delimiter: string; quote: string; escape: string; header: boolean };
    const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
    const casts = table.columns
      .map((col) =>
        col.kind === 'text'
          ? col.name
          : `TRY_CAST(nullif(trim(${col.name}), '') AS ${DUCKDB_TYPE[col.kind]}) AS ${col.name}`,
      )
      .join(', ');
    await c.run(
      `CREATE TABLE files.${name} AS SELECT ${casts} FROM read_csv(${lit(path)}, all_varchar = true, delim = ${lit(d.delimiter)}, quote = ${lit(d.quote)}, escape = ${lit(d.escape)}, header = ${d.header}, encoding = 'utf-8')`,
    );
    return { table: `files.${name}`, columns: table.columns };
  };

  const viaService = async (sql: string): Promise<Answer> => {
    const a: SqlAnswer = await querySql(t, sql);
    if (a.type !== 'table') return { ok: false, error: `${a.error_code}: ${a.error_message}` };
    const types = a.column_types!;
    return { ok: true, types, rows: a.data!.map((r) => comparable(types, r)) };
  };

  const viaDuckDb = async (sql: string): Promise<Answer> => {
    try {
      const reader = await c.runAndReadAll(sql);
      const types = reader.columnTypes().map(String);
      return {
        ok: true,
        types,
        rows: reader.getRowsJson().map((r) =>
          comparable(
            types,
            r.map((v, i) => fromDuckJson(types[i]!, v)),
          ),
        ),
      };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  };

  const world = fc.tuple(generatedTable(), generatedTable()).chain(([a, b]) => {
    // Placeholder names: the queries are generated before the files get their names.
    const from = fromClause(
      { table: 'files.<a>', columns: a.columns },
      { table: 'files.<b>', columns: b.columns },
    );
    const queries = fc.array(from.chain(anySelect), {
      minLength: QUERIES_PER_RUN,
      maxLength: QUERIES_PER_RUN,
    });
    const partition = from.chain((f) =>
      fc.tuple(
        plainSelect(f).filter((q) => !q.ordered && !/SELECT DISTINCT/.test(q.sql)),
        sqlOver(f.sources).predicate(2),
      ),
    );
    return fc.record({ a: fc.constant(a), b: fc.constant(b), queries, partition });
  });

  type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

  /** The drawn queries answer as plain DuckDB answers them, and the drawn partition holds. */
  const answersAsDuckDb = async ({ a, b, queries, partition }: World) => {
    const fa = await given(a);
    const fb = await given(b);
    const named = (sql: string) => sql.split('files.<a>').join(fa.table).split('files.<b>').join(fb.table);

    for (const q of queries) {
      const sql = named(q.sql);
      const [service, duckdb] = [await viaService(sql), await viaDuckDb(sql)];
      // An error on one side only is a difference; both failing (a type error DuckDB finds) is agreement.
      expect({ sql, answer: shapeOf(service, q.ordered) }).toEqual({
        sql,
        answer: shapeOf(duckdb, q.ordered),
      });
    }

    const [base, p] = partition;
    const baseSql = named(base.sql);
    const whereAt = baseSql.indexOf(' WHERE ');
    const filtered = (condition: string) =>
      whereAt === -1
        ? `${baseSql} WHERE ${condition}`
        : `${baseSql.slice(0, whereAt)} WHERE (${baseSql.slice(whereAt + 7)}) AND (${condition})`;
    const pSql = named(p);
    const whole = await viaService(baseSql);
    const parts = [
      await viaService(filtered(pSql)),
      await viaService(filtered(`NOT (${pSql})`)),
      await viaService(filtered(`(${pSql}) IS NULL`)),
    ];
    if (!whole.ok) {
      // A query DuckDB refuses (a type error in the base) is refused whole and in parts.
      expect(parts.map((x) => x.ok)).toEqual([false, false, false]);
      return;
    }
    const union = parts.flatMap((x) => (x.ok ? x.rows : [[`error: ${x.error}`]]));
    expect({ sql: baseSql, p: pSql, rows: multiset(union) }).toEqual({
      sql: baseSql,
      p: pSql,
      rows: multiset(whole.rows),
    });
  };

  it('answers each generated SELECT as DuckDB does, and partitions rows by p, NOT p, p IS NULL', async () => {
    await fc.assert(fc.asyncProperty(world, answersAsDuckDb), {
      seed: SEED,
      numRuns: propertyRuns(NUM_RUNS),
    });
  }, 240_000);

  it('kill check: integer cells always sent as their digits are caught', async () => {
    const spy = integersAsDigits(t.running.sql);
    try {
      await expectCaught(fc.asyncProperty(world, answersAsDuckDb), {
        seed: SEED,
        numRuns: propertyRuns(NUM_RUNS),
      });
    } finally {
      spy.mockRestore();
    }
  }, 240_000);
});
