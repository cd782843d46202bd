import type { DuckDBConnection } from '@duckdb/node-api';
import { isKeyword, significant, textOf, tokenize, unquoted, type Token } from '../../shared/sqlTokens';
import { SqlError, SqlErrorCode } from '../errors';

/**
 * Time travel in SELECTs: `FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '2026-11-22 10:00:00'`,
 * `… AS OF POSITION 1234` (SQL:2011's clause; `FOR SYSTEM_TIME` may be left out). DuckDB's parser
 * knows neither, so the clause is taken out of the text before parsing and the table's name marked
 * with the log position it asks for (`"skills@asof:1234"`): the mark survives printing and
 * re-parsing (views), and the planner reads the table's rows as of that position (catalog.ts).
 * A timestamp means the last event recorded at or before it (UTC).
 */
const MARK = /^(.*)@asof:(\d+)$/s;

type AsOfMark = { table: string; position: bigint };

/** The table name and position a marked name asks for, or undefined for a plain name. */
export const asOfMarkOf = (name: string): AsOfMark | undefined => {
  const m = MARK.exec(name);
  return m ? { table: m[1]!, position: BigInt(m[2]!) } : undefined;
};

const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The position of the last event recorded at or before `timestamp` (0: before the first event). */
const positionAt = async (c: DuckDBConnection, timestamp: string): Promise<bigint> => {
  if (Number.isNaN(Date.parse(timestamp.replace(' ', 'T'))))
    throw new SqlError(SqlErrorCode.Invalid, `AS OF TIMESTAMP '${timestamp}' is not a timestamp`);
  const reader = await c.runAndReadAll(
    'SELECT coalesce(max(global_position), 0) FROM main.events WHERE recorded_at <= CAST($1 AS TIMESTAMP)',
    [timestamp],
  );
  return BigInt(reader.getRows()[0]![0] as bigint | number);
};

/**
 * The text with each AS OF clause taken out and its table's name marked; unchanged without one.
 * A clause that is not after a table name, or names neither TIMESTAMP nor POSITION, is a syntax
 * error naming what is expected.
 */
export const markAsOf = async (c: DuckDBConnection, sql: string): Promise<string> => {
  if (!/\bAS\s+OF\b/i.test(sql)) return sql;
  const tokens = significant(tokenize(sql, 'duckdb'));
  const edits: { start: number; end: number; text: string }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    // `FOR SYSTEM_TIME AS OF …` or `AS OF TIMESTAMP|POSITION …`.
    const system = isKeyword(sql, tokens[i], 'FOR') && isKeyword(sql, tokens[i + 1], 'SYSTEM_TIME');
    const at = system ? i + 2 : i;
    if (!(isKeyword(sql, tokens[at], 'AS') && isKeyword(sql, tokens[at + 1], 'OF'))) continue;
    const kind = tokens[at + 2];
    const value = tokens[at + 3];
    const byTimestamp = isKeyword(sql, kind, 'TIMESTAMP');
    const byPosition = isKeyword(sql, kind, 'POSITION');
    if (!byTimestamp && !byPosition) {
      if (!system) continue; // `AS of` as an alias, say.
      throw new SqlError(SqlErrorCode.Syntax, "FOR SYSTEM_TIME AS OF takes TIMESTAMP '…' or POSITION n");
    }
    const table: Token | undefined = tokens[i - 1];
    if (!table || (table.kind !== 'word' && table.kind !== 'identifier'))
      throw new SqlError(
        SqlErrorCode.Syntax,
        'AS OF belongs right after a table name (FROM t AS OF POSITION n)',
      );
    let position: bigint;
    if (byTimestamp) {
      if (value?.kind !== 'string')
        throw new SqlError(
          SqlErrorCode.Syntax,
          "AS OF TIMESTAMP takes a quoted timestamp: '2026-11-22 10:00:00'",
        );
      position = await positionAt(c, unquoted(sql, value));
    } else {
      const text = value ? textOf(sql, value) : '';
      if (value?.kind !== 'word' || !/^\d+$/.test(text))
        throw new SqlError(SqlErrorCode.Syntax, 'AS OF POSITION takes a log position: a whole number');
      position = BigInt(text);
    }
    const name = table.kind === 'identifier' ? unquoted(sql, table) : textOf(sql, table);
    edits.push({ start: table.start, end: table.end, text: quoteIdentifier(`${name}@asof:${position}`) });
    edits.push({ start: tokens[i]!.start, end: value!.end, text: '' });
    i = at + 3;
  }
  let out = sql;
  for (const e of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
};

/**
 * The placeholders the planner puts where an AS OF table stood (a plain name DuckDB prints as it is),
 * and the subqueries they stand for, put in place in the printed text.
 */
export const asOfPlaceholders = () => {
  const subqueries: string[] = [];
  return {
    add: (subquery: string) => `__mindledger_as_of_${subqueries.push(subquery) - 1}`,
    get size() {
      return subqueries.length;
    },
    fill: (printed: string) =>
      subqueries.length === 0
        ? printed
        : printed.replace(/"?__mindledger_as_of_(\d+)"?/g, (_m, i: string) => `(${subqueries[Number(i)]})`),
  };
};
