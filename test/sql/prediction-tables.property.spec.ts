import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { loadColumns } from '../../src/sql/faces/model/predictionTables';
import { inMemoryConnection } from '../support/memoryDuck';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

/**
 * Computed rows (predictions, answers) go into a temporary table a data chunk at a time, typed from
 * their values. The promise: every value reads back as it went in (text columns hold non-strings as
 * JSON), whatever the values and however many chunks they span. Beside it, a kill check: a load
 * whose appender takes full data chunks only (the last, shorter one lost) is caught at the count
 * `npm test` runs.
 */
/** `target` with one method of its own: `method` answers in its place, the rest is `target`'s. */
const withMethod = <T extends object, K extends keyof T>(target: T, method: K, own: T[K]): T =>
  new Proxy(target, {
    get: (t, key) => {
      if (key === method) return own;
      const value = Reflect.get(t, key, t) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });

/**
 * A connection whose appenders take full data chunks (2,048 rows) only: the last, shorter chunk of
 * a load never reaches the table (the kill check's bug).
 */
const fullChunksOnly = (c: DuckDBConnection): DuckDBConnection =>
  withMethod(c, 'createAppender', async (...args: Parameters<DuckDBConnection['createAppender']>) => {
    const appender = await c.createAppender(...args);
    return withMethod(appender, 'appendDataChunk', ((chunk) => {
      if (chunk.rowCount === 2048) appender.appendDataChunk(chunk);
    }) as DuckDBAppender['appendDataChunk']);
  });

describe('computed columns loaded into DuckDB', () => {
  const connection = inMemoryConnection();

  const readBack = async (values: unknown[], loadingOn: DuckDBConnection = connection()) => {
    await loadColumns(loadingOn, [], 'computed', ['v'], { length: values.length, values: { v: values } });
    const reader = await connection().runAndReadAll('SELECT v FROM computed');
    return reader.getColumnsJS()[0] ?? [];
  };
  /** Text as DuckDB holds it: UTF-8, a lone surrogate replaced by U+FFFD (as every text cell is). */
  const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('utf8');
  /** What a value is once stored: its own kind of number, boolean or text (others as JSON). */
  const expected = (values: unknown[]) => {
    const present = values.filter((v) => v !== null && v !== undefined);
    const numbers = present.length > 0 && present.every((v) => typeof v === 'number');
    const booleans = present.length > 0 && present.every((v) => typeof v === 'boolean');
    const integers = numbers && present.every((v) => Number.isSafeInteger(v));
    return values.map((v) =>
      v === null || v === undefined
        ? null
        : integers
          ? BigInt(v as number)
          : numbers || booleans
            ? v
            : typeof v === 'string'
              ? utf8(v)
              : utf8(JSON.stringify(v)),
    );
  };

  /** Each value loaded through `loadingOn` reads back as it went in. */
  const readsBackAsItWentIn = async (values: unknown[], loadingOn: DuckDBConnection) => {
    expect(await readBack(values, loadingOn)).toEqual(expected(values));
  };

  const value = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(1e20, -1e300, 2 ** 53 + 2, 9007199254740991),
    fc.boolean(),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom('\uD800', 'a\u0000b', null, undefined, { a: [1] }),
  );
  // One kind per column (as a model's columns are), or a mix: both are typed from their values.
  const column = fc.oneof(
    fc.array(fc.oneof(fc.integer(), fc.constantFrom(1e20, -(2 ** 60), null)), { maxLength: 5000 }),
    fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 5000 }),
    fc.array(value, { maxLength: 3000 }),
  );

  it('given generated values (large integers, doubles, booleans, text with lone surrogates and NUL, objects, nulls) over several chunks, when loaded, then each reads back as it went in', async () => {
    await fc.assert(
      fc.asyncProperty(column, (values) => readsBackAsItWentIn(values, connection())),
      { seed: propertySeed(), numRuns: propertyRuns(40) },
    );
  });

  it('kill check: a load whose last, shorter data chunk is lost is caught', async () => {
    await expectCaught(
      fc.asyncProperty(column, (values) => readsBackAsItWentIn(values, fullChunksOnly(connection()))),
      { seed: propertySeed(), numRuns: propertyRuns(40) },
    );
  });

  it('an integer past 2^63 is kept as a double, not wrapped', async () => {
    expect(await readBack([1e20, 3])).toEqual([1e20, 3]);
  });
});
