/**
 * A query run in DuckDB over a customer's table (joined with something of DuckDB's) answers what
 * DuckDB answers over the same rows, whatever the database's collation and whatever the constant's
 * type. Its conditions on the table are sent along with the fetch, and DuckDB applies them again,
 * so a condition there may keep more rows than DuckDB would, never fewer.
 *
 * Properties (a fresh seed each run, bounded runs), on a MariaDB table (a case- and
 * accent-insensitive collation) and a PostgreSQL one (ICU's root collation), each answering beside
 * `range(1)` the rows DuckDB finds among the same values in a VALUES list:
 * - texts (case, accents, trailing spaces) compared (= <> < > <= >=) with a generated text;
 * - decimals (scales 0 to 3) compared with a generated decimal written at its own scale.
 * Kill checks: the dialects' `bytewise` made the database's own comparison (the text filter as it
 * was sent before: `city < 'paris'` under `_ci` left out 'Paris'); a decimal written scaled to a
 * whole number (as it was sent before: `n > 0.5` went as `n > 5`). Each is caught at this count.
 */
import fc from 'fast-check';
import { Digits, MYSQL_DIALECT, POSTGRES_DIALECT } from '../../src/integrations/dialects';
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
/** Rows of one column, and a condition on it. */
type Comparison = { rows: string[]; operator: Operator; constant: string };
/** The same letters in the other case (`é` without its accent): equal under a `_ci` collation. */
const otherCase = (s: string) =>
  [...s]
    .map((ch) => (ch === 'é' ? 'e' : ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()))
    .join('');
const comparison: fc.Arbitrary<Comparison> = fc
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

/** A decimal written at its own scale: `-0.125`, `2.50`, `3`. */
const decimal = fc
  .record({ scaled: fc.integer({ min: -2000, max: 2000 }), scale: fc.integer({ min: 0, max: 3 }) })
  .map(({ scaled, scale }) => {
    const whole = String(Math.abs(scaled)).padStart(scale + 1, '0');
    const digits = scale === 0 ? whole : `${whole.slice(0, -scale)}.${whole.slice(-scale)}`;
    return `${scaled < 0 ? '-' : ''}${digits}`;
  });
const numberComparison: fc.Arbitrary<Comparison> = fc
  .record({
    rows: fc.array(decimal, { minLength: 3, maxLength: 8 }),
    operator: fc.constantFrom<Operator>('=', '<>', '<', '>', '<=', '>='),
    constant: decimal,
  })
  // Half the time the constant is a row's value (at another scale, sometimes): equality meets it.
  .chain((c) =>
    fc.oneof(
      fc.constant(c),
      fc.constantFrom(...c.rows).map((row) => ({ ...c, constant: row.includes('.') ? `${row}0` : row })),
    ),
  );

/** Which column a comparison is of, and how its values are written in SQL. */
type Kind = { column: 'v' | 'n'; literal: (value: string) => string };
const TEXT: Kind = { column: 'v', literal: (s) => `'${s}'` };
const NUMBER: Kind = { column: 'n', literal: (s) => s };

describe('conditions sent along with a fetch keep every row DuckDB keeps (texts and decimals, both engines)', () => {
  let t: TestApp;
  const registered: Partial<Record<ExternalEngine, { name: string; drop: () => Promise<void> }>> = {};
  let nextId = 0;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    const sources = {
      postgres: await freshPostgresData([
        'CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT COLLATE "und-x-icu", n NUMERIC(12, 4))',
      ]),
      mysql: await freshMariaData([
        'CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, n DECIMAL(12, 4))',
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

  /** Whether the federated answer is DuckDB's over the same values. */
  const agrees = async (engine: ExternalEngine, kind: Kind, c: Comparison) => {
    const db = registered[engine]!.name;
    const { column, literal } = kind;
    const ids = c.rows.map(() => ++nextId);
    const values = c.rows.map((v, i) => `(${ids[i]}, ${literal(v)})`).join(', ');
    const written = await querySql(t, `INSERT INTO ${db}.t (id, ${column}) VALUES ${values}`);
    expect(written).toMatchObject({ type: 'ok', affected_rows: c.rows.length });
    const among = `id IN (${ids.join(', ')})`;
    const condition = `${column} ${c.operator} ${literal(c.constant)}`;
    const federated = await querySql(
      t,
      `SELECT x.id FROM ${db}.t x, range(1) r WHERE x.${condition} AND x.${among} ORDER BY 1`,
    );
    const local = await querySql(
      t,
      `SELECT id FROM (VALUES ${values}) AS y(id, ${column}) WHERE ${condition} ORDER BY 1`,
    );
    expect(federated.type).toBe('table');
    expect(local.type).toBe('table');
    return JSON.stringify(federated.data) === JSON.stringify(local.data);
  };

  const ENGINES = [
    ['postgres', POSTGRES_DIALECT],
    ['mysql', MYSQL_DIALECT],
  ] as const;

  const PROPERTIES = ENGINES.flatMap(([engine]) => [
    { engine, what: 'text', kind: TEXT, drawn: comparison },
    { engine, what: 'decimal', kind: NUMBER, drawn: numberComparison },
  ]);

  it.each(PROPERTIES)('$engine: a $what comparison answers as DuckDB over the same values', async (p) => {
    await fc.assert(
      fc.asyncProperty(p.drawn, async (c) => expect(await agrees(p.engine, p.kind, c)).toBe(true)),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("kill check: the database's own text comparison sent alone (as before) is caught on both", async () => {
    for (const [engine, dialect] of ENGINES)
      await whileBugged(
        () => methodReplaced(dialect, 'bytewise', () => (expression: string) => expression),
        () =>
          expectCaught(
            fc.asyncProperty(comparison, (c) => agrees(engine, TEXT, c)),
            { seed: SEED, numRuns: RUNS },
          ),
      );
  });

  it('kill check: a decimal sent scaled to a whole number (as before: 0.5 as 5) is caught on both', async () => {
    const scaled = (original: (value: unknown) => string) => (value: unknown) =>
      original(value instanceof Digits ? new Digits(String(Number(value.text.replace('.', '')))) : value);
    for (const [engine, dialect] of ENGINES)
      await whileBugged(
        () => methodReplaced(dialect, 'literal', scaled),
        () =>
          expectCaught(
            fc.asyncProperty(numberComparison, (c) => agrees(engine, NUMBER, c)),
            { seed: SEED, numRuns: RUNS },
          ),
      );
  });
});
