/**
 * A query run in DuckDB over a customer's table (joined with something of DuckDB's) answers what
 * DuckDB answers over the same rows, whatever the database's collation. Its conditions on the
 * table are sent along with the fetch, and DuckDB applies them again, so a condition there may keep
 * more rows than DuckDB would, never fewer.
 *
 * Property (a fresh seed each run, bounded runs): generated texts (case, accents, trailing spaces)
 * in a MariaDB column of a case- and accent-insensitive collation and a PostgreSQL column of ICU's
 * root collation; a generated comparison (= <> < > <= >=) with a generated text answers, beside
 * `range(1)`, the rows DuckDB finds among the same texts in a VALUES list.
 * Kill check: the dialects' `bytewise` made the database's own comparison (the filter as it was
 * sent before: `city < 'paris'` under `_ci` left out 'Paris') is caught at this count.
 */
import fc from 'fast-check';
import { MYSQL_DIALECT, POSTGRES_DIALECT } from '../../src/integrations/dialects';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData, type ExternalEngine } from '../support/external';
import { methodReplaced, whileBugged } from '../support/killChecks';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';
import { givenDatabase, uniqueName } from '../support/world';

const SEED = propertySeed();
const RUNS = propertyRuns(60);

/** Texts two collations read otherwise than bytes do: case, accents, a trailing space. */
const text = fc
  .array(fc.constantFrom('a', 'A', 'b', 'B', 'e', 'é', 'E', 'z', ' ', '1'), { minLength: 1, maxLength: 4 })
  .map((chars) => chars.join(''));
type Operator = '=' | '<>' | '<' | '>' | '<=' | '>=';
/** The same letters in the other case (`é` without its accent): equal under a `_ci` collation. */
const otherCase = (s: string) =>
  [...s]
    .map((ch) => (ch === 'é' ? 'e' : ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()))
    .join('');
const comparison = fc
  .record({
    rows: fc.array(text, { minLength: 3, maxLength: 8 }),
    // The orders and `<>` most: where a collation keeps fewer rows than bytes do.
    operator: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom<Operator>('<>', '<', '>') },
      { weight: 1, arbitrary: fc.constantFrom<Operator>('=', '<=', '>=') },
    ),
    constant: text,
  })
  // Half the time the constant is a row in the other case: where collations and bytes part most.
  .chain((c) =>
    fc.oneof(
      fc.constant(c),
      fc.constantFrom(...c.rows).map((row) => ({ ...c, constant: otherCase(row) })),
    ),
  );
type Comparison = typeof comparison extends fc.Arbitrary<infer C> ? C : never;

/** A text as a literal of the SQL endpoint (no backslash or quote is ever drawn). */
const lit = (s: string) => `'${s}'`;

describe('conditions sent along with a fetch keep every row DuckDB keeps (both collations)', () => {
  let t: TestApp;
  const registered: Partial<Record<ExternalEngine, { name: string; drop: () => Promise<void> }>> = {};
  let nextId = 0;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    const sources = {
      postgres: await freshPostgresData([
        'CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT COLLATE "und-x-icu")',
      ]),
      mysql: await freshMariaData([
        'CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)',
      ]),
    };
    for (const engine of ['postgres', 'mysql'] as const) {
      const name = uniqueName(engine === 'postgres' ? 'icu' : 'ci');
      await givenDatabase(t, { name, engine, parameters: sources[engine].parameters });
      registered[engine] = { name, drop: sources[engine].drop };
    }
  });
  afterAll(async () => {
    await t?.dispose();
    for (const r of Object.values(registered)) await r?.drop();
  });

  /** Whether the federated answer is DuckDB's over the same texts. */
  const agrees = async (engine: ExternalEngine, c: Comparison) => {
    const db = registered[engine]!.name;
    const ids = c.rows.map(() => ++nextId);
    const values = c.rows.map((v, i) => `(${ids[i]}, ${lit(v)})`).join(', ');
    const written = await querySql(t, `INSERT INTO ${db}.t (id, v) VALUES ${values}`);
    expect(written).toMatchObject({ type: 'ok', affected_rows: c.rows.length });
    const among = `id IN (${ids.join(', ')})`;
    const federated = await querySql(
      t,
      `SELECT x.id FROM ${db}.t x, range(1) r WHERE x.v ${c.operator} ${lit(c.constant)} AND x.${among} ORDER BY 1`,
    );
    const local = await querySql(
      t,
      `SELECT id FROM (VALUES ${values}) AS y(id, v) WHERE v ${c.operator} ${lit(c.constant)} ORDER BY 1`,
    );
    expect(federated.type).toBe('table');
    expect(local.type).toBe('table');
    return JSON.stringify(federated.data) === JSON.stringify(local.data);
  };

  it.each(['postgres', 'mysql'] as const)(
    '%s: the answer is DuckDB’s over the same texts',
    async (engine) => {
      await fc.assert(
        fc.asyncProperty(comparison, async (c) => expect(await agrees(engine, c)).toBe(true)),
        { seed: SEED, numRuns: RUNS },
      );
    },
  );

  it("kill check: the database's own comparison sent alone (as before) is caught on both", async () => {
    for (const [engine, dialect] of [
      ['postgres', POSTGRES_DIALECT],
      ['mysql', MYSQL_DIALECT],
    ] as const)
      await whileBugged(
        () => methodReplaced(dialect, 'bytewise', () => (expression: string) => expression),
        () =>
          expectCaught(
            fc.asyncProperty(comparison, (c) => agrees(engine, c)),
            { seed: SEED, numRuns: RUNS },
          ),
      );
  });
});
