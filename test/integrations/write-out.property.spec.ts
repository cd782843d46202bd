/**
 * Write-out ≡ read (issue 37): whatever SELECT the endpoint answers, `INSERT INTO <integration>.t
 * (SELECT …)` stores exactly its rows: a read of `t` afterwards answers them again. Generated
 * SELECTs over generated typed rows (integers past 2^53, doubles, decimals, text with quotes,
 * backslashes and non-ASCII, booleans, dates, timestamps, NULLs), over an external database's
 * table, and joined with a model (predictions), with WHERE, ORDER BY and LIMIT; written into a
 * real PostgreSQL and a real MariaDB, into a table made from the same query (`CREATE TABLE … LIMIT 0`).
 * Beside it, a kill check: an INSERT that leaves out the last row of its batch is caught at the count
 * `npm test` runs.
 */
import fc from 'fast-check';
import pg from 'pg';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData, type ExternalEngine } from '../support/external';
import { givenRentalsModel, rentalRows } from '../support/modelsData';
import { givenDatabase, givenProject, uniqueName } from '../support/world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

/** Fixed, so a failure reproduces. */
const SEED = propertySeed();
const RUNS = 25;

type Source = { name: string; parameters: Record<string, unknown>; drop: () => Promise<void> };

// ---- generated rows: a column is of one kind, each cell a literal of it (in MySQL's dialect) or NULL

type Kind = 'integer' | 'double' | 'decimal' | 'text' | 'boolean' | 'date' | 'timestamp';

const mysqlString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

const LITERALS: Record<Kind, fc.Arbitrary<string>> = {
  integer: fc
    .oneof(
      fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n }),
      fc.bigInt({ min: -1000n, max: 1000n }),
      fc.constantFrom(2n ** 53n + 1n, -(2n ** 53n) - 1n),
    )
    .map((n) => `CAST(${n} AS BIGINT)`),
  double: fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .map((n) => `CAST(${Object.is(n, -0) ? '0' : String(n)} AS DOUBLE)`),
  decimal: fc
    .tuple(fc.integer({ min: -99_999_999, max: 99_999_999 }), fc.integer({ min: 0, max: 99 }))
    .map(([whole, cents]) => `CAST(${whole}.${pad(cents)} AS DECIMAL(12,2))`),
  // Printable text as a client sends it: quotes, backslashes, accents, emoji; never NUL.
  text: fc
    .string({
      unit: fc.oneof(
        fc.constantFrom("'", '\\', '"', '%', 'é', '日', '😀', ' '),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      ),
      maxLength: 12,
    })
    .filter((s) => !s.includes('\u0000'))
    .map(mysqlString),
  boolean: fc.boolean().map((b) => (b ? 'TRUE' : 'FALSE')),
  date: fc
    .tuple(
      fc.integer({ min: 1970, max: 2200 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 28 }),
    )
    .map(([y, m, d]) => `CAST('${y}-${pad(m)}-${pad(d)}' AS DATE)`),
  // Milliseconds, not microseconds: the tables written hold microseconds (DATETIME(6), TIMESTAMP),
  // but reading an external database's timestamps goes through JavaScript Dates, which keep
  // milliseconds (src/sql/federation.ts `externalAnswer`): a read-side limit this property is not about.
  timestamp: fc
    .tuple(
      fc.integer({ min: 1971, max: 2037 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 28 }),
      fc.integer({ min: 0, max: 86_399 }),
      fc.integer({ min: 0, max: 999 }),
    )
    .map(
      ([y, m, d, s, ms]) =>
        `CAST('${y}-${pad(m)}-${pad(d)} ${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}.${pad(ms, 3)}' AS TIMESTAMP)`,
    ),
};
const KINDS = Object.keys(LITERALS) as Kind[];

/** Rows of generated columns, each row led by a unique `id` (what ORDER BY … LIMIT keys on). */
const generatedRows = fc.array(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 5 }).chain((kinds) =>
  fc
    .array(fc.tuple(...kinds.map((k) => fc.option(LITERALS[k], { nil: null, freq: 6 }))), {
      minLength: 0,
      maxLength: 12,
    })
    .map((rows) => ({ kinds, rows })),
);

/** The rows as a derived table `v(id, c0, c1, …)`; with none, one row WHERE FALSE (same columns, no rows). */
const valuesTable = ({ kinds, rows }: { kinds: Kind[]; rows: (string | null)[][] }) => {
  const typed = (cell: string | null, k: number) =>
    cell ??
    `CAST(NULL AS ${{ integer: 'BIGINT', double: 'DOUBLE', decimal: 'DECIMAL(12,2)', text: 'VARCHAR', boolean: 'BOOLEAN', date: 'DATE', timestamp: 'TIMESTAMP' }[kinds[k]!]})`;
  const tuples = (rows.length ? rows : [kinds.map(() => null)]).map(
    (row, i) => `(${[String(i + 1), ...row.map(typed)].join(', ')})`,
  );
  const names = ['id', ...kinds.map((_, k) => `c${k}`)].join(', ');
  return `(SELECT * FROM (VALUES ${tuples.join(', ')}) AS g(${names})${rows.length ? '' : ' WHERE FALSE'}) AS v`;
};

/** A size per row id (1…12), as one CASE: the model's input column. */
const rowValue = (values: number[]) =>
  `CASE v.id ${values.map((n, i) => `WHEN ${i + 1} THEN ${n}`).join(' ')} END`;

/** A generated SELECT: its source, what it keeps, and the clauses after FROM. */
const generatedSelect = (model: string, listings: string) =>
  fc.oneof(
    // Generated rows, some columns, filtered, limited in id order.
    fc
      .record({
        rows: generatedRows,
        keep: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        where: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
        limit: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
      })
      .map(({ rows, keep, where, limit }) => {
        const columns = ['v.id', ...rows.kinds.map((_, k) => `v.c${k}`).filter((_, k) => keep[k])];
        return `SELECT ${columns.join(', ')} FROM ${valuesTable(rows)}${where === null ? '' : ` WHERE v.id <= ${where}`}${limit === null ? '' : ` ORDER BY v.id LIMIT ${limit}`}`;
      }),
    // Generated rows joined with the model: a prediction per row, beside the row's own columns.
    fc
      .record({
        rows: generatedRows,
        sqft: fc.array(fc.integer({ min: 200, max: 2000 }), { minLength: 12, maxLength: 12 }),
        limit: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
      })
      .map(({ rows, sqft, limit }) => {
        const located = `(SELECT v.*, ${rowValue(sqft)} AS sqft, CASE WHEN v.id % 3 = 0 THEN 'great' ELSE 'good' END AS location FROM ${valuesTable(rows)}) AS t`;
        return `SELECT t.*, m.rental_price FROM ${located} JOIN ${model} AS m${limit === null ? '' : ` ORDER BY t.id LIMIT ${limit}`}`;
      }),
    // An external database's table, with or without the model, filtered and limited there.
    fc
      .record({
        predicted: fc.boolean(),
        above: fc.integer({ min: 0, max: 1300 }),
        limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
      })
      .map(({ predicted, above, limit }) =>
        predicted
          ? `SELECT t.id, t.location, m.rental_price AS predicted FROM ${listings} AS t JOIN ${model} AS m WHERE t.sqft > ${above}${limit === null ? '' : ` ORDER BY t.id LIMIT ${limit}`}`
          : `SELECT t.id, t.sqft * 2 AS doubled, upper(t.location) AS loud FROM ${listings} AS t WHERE t.sqft > ${above}${limit === null ? '' : ` ORDER BY t.id LIMIT ${limit}`}`,
      ),
  );

/**
 * A cell as a read of the written table answers it. MariaDB has no BOOLEAN (it is TINYINT(1)):
 * true and false come back as 1 and 0 there, and nothing else differs.
 */
const asStored = (engine: ExternalEngine, cell: unknown) =>
  engine === 'mysql' && typeof cell === 'boolean' ? Number(cell) : cell;

/** Rows as a multiset: each row's JSON, sorted. */
const multiset = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

const ok = (answer: SqlAnswer, what: string) => {
  if (answer.type === 'error') throw new Error(`${what}: ${answer.error_message}`);
  return answer;
};

/**
 * Runs `work` while every INSERT of rows into a written table (`out_…`) sent to PostgreSQL leaves
 * out the last row of its batch (the kill check's bug), the others as sent; restored afterwards.
 */
const droppingEachBatchsLastRow = async <T>(work: () => Promise<T>): Promise<T> => {
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    const [sent] = args as [{ text?: unknown; values?: unknown[] } | undefined];
    const text = typeof sent?.text === 'string' ? sent.text : '';
    const last = text.lastIndexOf(', (');
    if (!/^INSERT INTO "[^"]+"\."out_\d+" /.test(text) || last < text.indexOf(' VALUES ') || !sent?.values)
      return query.apply(this, args);
    const width = text.slice(last + 2).split(',').length;
    return query.call(this, { ...sent, text: text.slice(0, last), values: sent.values.slice(0, -width) });
  } as never);
  try {
    return await work();
  } finally {
    spy.mockRestore();
  }
};

describe.each(storeKinds)(
  'write-out ≡ read: INSERT INTO db.t (SELECT …) stores the rows the SELECT answers (%s)',
  (store) => {
    let t: TestApp;
    let project: string;
    const sources: Source[] = [];
    const targets: { engine: ExternalEngine; db: string }[] = [];
    let listings: string;

    beforeAll(async () => {
      t = await startTestApp(store);
      ({ name: project } = await givenProject(t));
      await givenRentalsModel(t, project, rentalRows(45));
      const listingsDb = await freshPostgresData([
        'CREATE TABLE listings (id INT PRIMARY KEY, sqft INT, location VARCHAR(20))',
        "INSERT INTO listings VALUES (1, 420, 'good'), (2, 910, 'great'), (3, 655, 'good'), (4, 1200, 'great'), (5, 380, 'good'), (6, 777, 'good')",
      ]);
      sources.push(listingsDb);
      listings = `${(await givenDatabase(t, { name: uniqueName('listings'), parameters: listingsDb.parameters })).name}.listings`;
      for (const [engine, fresh] of [
        ['postgres', freshPostgresData],
        ['mysql', freshMariaData],
      ] as const) {
        const target = await fresh([]);
        sources.push(target);
        const db = (
          await givenDatabase(t, {
            name: uniqueName(`target_${engine}`),
            engine,
            parameters: target.parameters,
          })
        ).name;
        targets.push({ engine, db });
      }
    }, 60_000);
    afterAll(async () => {
      await t?.running.services.models.idle();
      await t?.dispose();
      for (const s of sources) await s.drop();
    });

    let run = 0;
    /** Inserts the rows `query` answers into a table made from it in each target: a read answers them. */
    const storesWhatItAnswers = async (query: string) => {
      run += 1;
      const answered = ok(await querySql(t, query), query);
      for (const { engine, db } of targets) {
        const table = `${db}.out_${run}`;
        ok(
          await querySql(t, `CREATE TABLE ${table} (SELECT * FROM (${query}) AS q LIMIT 0)`),
          `CREATE TABLE for ${query}`,
        );
        const inserted = ok(await querySql(t, `INSERT INTO ${table} (${query})`), `INSERT for ${query}`);
        expect({ engine, query, inserted }).toMatchObject({
          engine,
          query,
          inserted: { type: 'ok', affected_rows: answered.data!.length },
        });
        const read = ok(await querySql(t, `SELECT * FROM ${table}`), `read of ${table}`);
        expect({ engine, query, columns: read.column_names, rows: multiset(read.data!) }).toEqual({
          engine,
          query,
          columns: answered.column_names,
          rows: multiset(answered.data!.map((row) => row.map((cell) => asStored(engine, cell)))),
        });
      }
    };

    it('given generated SELECTs, when each is inserted into a PostgreSQL and a MariaDB table made from it, then reading the table answers the SELECT’s rows', async () => {
      await fc.assert(
        fc.asyncProperty(generatedSelect(`${project}.rentals`, listings), storesWhatItAnswers),
        { seed: SEED, numRuns: propertyRuns(RUNS) },
      );
    }, 120_000);

    it('kill check: an INSERT that leaves out the last row of its batch is caught', async () => {
      await droppingEachBatchsLastRow(() =>
        expectCaught(fc.asyncProperty(generatedSelect(`${project}.rentals`, listings), storesWhatItAnswers), {
          seed: SEED,
          numRuns: propertyRuns(RUNS),
        }),
      );
    }, 120_000);
  },
);
