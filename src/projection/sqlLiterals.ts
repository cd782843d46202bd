import type { Column } from './types';

/**
 * Cells written as SQL literals, so a small batch's rows go to DuckDB as one statement text run off
 * the main thread. The appender it replaces for small batches flushes synchronously on the main
 * thread (about a millisecond per table per batch on a file), and a bound statement costs a
 * synchronous prepare. A literal must store exactly what the appender stores (a spec compares the
 * two over generated rows); a value it cannot promise that for renders as `undefined`, and the batch
 * then keeps the appender.
 */

/**
 * A JSON cell held as the text it is written as (`JSON.stringify` of an object or array), for rows
 * only written, never read back (rows.ts, `writtenRow`): the appender and the literal write the text.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A DuckDB string literal: standard SQL quoting, no escapes processed inside. */
const stringLiteral = (text: string): string | undefined =>
  // NUL and lone surrogates: the appender's byte handling is the reference, so they are left to it.
  text.includes('\0') || LONE_SURROGATE.test(text) ? undefined : `'${text.replaceAll("'", "''")}'`;

const BIGINT_TEXT = /^-?\d+$/;

const bigintLiteral = (value: unknown): string | undefined => {
  try {
    const text = BigInt(value as bigint | number | string).toString();
    return BIGINT_TEXT.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
};

const micros = (value: unknown): bigint | undefined => {
  const d = value instanceof Date ? value : new Date(String(value));
  const ms = d.getTime();
  return Number.isFinite(ms) ? BigInt(ms) * 1000n : undefined;
};

const listLiteral = (items: (string | undefined)[], type: string): string | undefined =>
  items.some((i) => i === undefined) ? undefined : `[${items.join(', ')}]::${type}`;

/** One cell as a literal of its column's type, or `undefined` when only the appender is exact. */
export const cellLiteral = (column: Column, value: unknown): string | undefined => {
  if (value === null || value === undefined) return 'NULL';
  switch (column.type) {
    case 'VARCHAR':
      return stringLiteral(String(value));
    case 'JSON':
      // The appender stores a string cell as given, even when it is not JSON; a JSON literal would
      // be checked. Parsed values are stringified as the appender does.
      if (value instanceof JsonText) return stringLiteral(value.text);
      if (typeof value === 'string') return undefined;
      return stringLiteral(JSON.stringify(value));
    case 'BIGINT':
      return bigintLiteral(value);
    case 'INTEGER': {
      const n = Number(value);
      return Number.isSafeInteger(n) && Math.abs(n) <= 2_147_483_647 ? String(n) : undefined;
    }
    case 'DOUBLE': {
      // Parsed from text (correctly rounded); a decimal literal would go through DECIMAL first.
      const n = Number(value);
      return Number.isFinite(n) ? `'${Object.is(n, -0) ? '-0' : String(n)}'::DOUBLE` : undefined;
    }
    case 'BOOLEAN':
      return value ? 'TRUE' : 'FALSE';
    case 'TIMESTAMP': {
      const m = micros(value);
      // An unreadable timestamp is stored as NULL by the appender too.
      if (m === undefined) return 'NULL';
      // A typed literal is cheaper for DuckDB than a function call per cell; years ISO text cannot
      // write plainly (before 1000, after 9999) go through microseconds.
      const iso = new Date(Number(m / 1000n)).toISOString();
      return /^\d{4}-/.test(iso) && !iso.startsWith('0')
        ? `TIMESTAMP '${iso.slice(0, 10)} ${iso.slice(11, 23)}'`
        : `make_timestamp(${m}::BIGINT)`;
    }
    case 'VARCHAR[]':
      return listLiteral(
        (value as unknown[]).map((v) => stringLiteral(String(v))),
        'VARCHAR[]',
      );
    case 'BIGINT[]':
      return listLiteral((value as unknown[]).map(bigintLiteral), 'BIGINT[]');
    default: {
      const exhaustive: never = column.type;
      return exhaustive;
    }
  }
};

/** `(a, b, …)` for one row in the columns' order, or `undefined`. */
export const rowLiteral = (columns: readonly Column[], row: Record<string, unknown>): string | undefined => {
  const cells: string[] = [];
  for (const c of columns) {
    const literal = cellLiteral(c, row[c.name]);
    if (literal === undefined) return undefined;
    cells.push(literal);
  }
  return `(${cells.join(', ')})`;
};
