import type { DuckDBConnection } from '@duckdb/node-api';
import type { ReadModelDigest, TableDigest } from './digest';
import { quoteQualifiedIdent } from '../shared/quoting';

/** A table that is not the same in two read models, with a few rows that only one side has. */
export type TableDifference = {
  table: string;
  live: TableDigest | null;
  rebuilt: TableDigest | null;
  /** Up to `sample` rows present in the live table and not in the rebuilt one (as JSON). */
  onlyLive: string[];
  onlyRebuilt: string[];
};

/** Tables larger than this are compared by digest only: their rows are not listed. */
const MAX_ROWS_TO_LIST = 200_000;

const rowsAsJson = async (c: DuckDBConnection, table: string): Promise<string[]> => {
  const reader = await c.runAndReadAll(`SELECT * FROM ${quoteQualifiedIdent(table)}`);
  return (reader.getRowObjectsJS() as Record<string, unknown>[]).map((row) =>
    JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}` : v)),
  );
};

/** Rows of `a` not matched one-for-one in `b` (a multiset difference), at most `limit` of them. */
const missingFrom = (a: string[], b: string[], limit: number) => {
  const counts = new Map<string, number>();
  for (const row of b) counts.set(row, (counts.get(row) ?? 0) + 1);
  const out: string[] = [];
  for (const row of a) {
    const n = counts.get(row) ?? 0;
    if (n > 0) counts.set(row, n - 1);
    else if (out.length < limit) out.push(row);
  }
  return out;
};

/**
 * Which tables differ between two read models at the same log position, and how: the digests say
 * which, the rows of small tables say what (a replay check is read by a person deciding whether the
 * live model lost data).
 */
export const compareReadModels = async (
  live: { digest: ReadModelDigest; connection: DuckDBConnection },
  rebuilt: { digest: ReadModelDigest; connection: DuckDBConnection },
  sample = 5,
): Promise<TableDifference[]> => {
  const liveTables = new Map(live.digest.tables.map((t) => [t.table, t]));
  const rebuiltTables = new Map(rebuilt.digest.tables.map((t) => [t.table, t]));
  const names = [...new Set([...liveTables.keys(), ...rebuiltTables.keys()])].sort();
  const differences: TableDifference[] = [];
  for (const table of names) {
    const l = liveTables.get(table) ?? null;
    const r = rebuiltTables.get(table) ?? null;
    if (l && r && l.rows === r.rows && l.hash === r.hash) continue;
    const listable = (l?.rows ?? 0) <= MAX_ROWS_TO_LIST && (r?.rows ?? 0) <= MAX_ROWS_TO_LIST;
    const liveRows = l && listable ? await rowsAsJson(live.connection, table) : [];
    const rebuiltRows = r && listable ? await rowsAsJson(rebuilt.connection, table) : [];
    differences.push({
      table,
      live: l,
      rebuilt: r,
      onlyLive: missingFrom(liveRows, rebuiltRows, sample),
      onlyRebuilt: missingFrom(rebuiltRows, liveRows, sample),
    });
  }
  return differences;
};
