import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/quoting';

/** Types a text column can take, tried in order; the first that fits nearly every value wins. */
export const CANDIDATES = ['BOOLEAN', 'BIGINT', 'DOUBLE', 'DATE', 'TIMESTAMP'] as const;
export type Candidate = (typeof CANDIDATES)[number];
/** A column keeps a type when at most this share of its non-empty cells fail to convert (they load as null). */
export const TOLERATED_INVALID = 0.02;

/** Above this many columns, type checks go through one UNPIVOT instead of one wide SELECT. */
const WIDE = 64;

/** What a pass counts of one column: its non-empty cells and, per candidate checked, the cells it holds. */
export type ColumnCounts = {
  readonly nonEmpty: number;
  readonly holds: ReadonlyMap<Candidate, number>;
  /** Cells with a fraction (BIGINT rounds '4123.8': a column is integral only if none has one). */
  readonly fractional: number;
  /** Cells with a time of day (DATE drops it: a column is of dates only if none has one). */
  readonly timed: number;
};

/** The aggregates that count a column's cells (`v`, trimmed, empty as null) for these candidates. */
const checksOf = (v: string, candidates: readonly Candidate[]) => [
  `count(${v})`,
  ...candidates.map((t) => `count(TRY_CAST(${v} AS ${t}))`),
  candidates.includes('BIGINT')
    ? `count(CASE WHEN TRY_CAST(${v} AS DOUBLE) <> trunc(TRY_CAST(${v} AS DOUBLE)) THEN 1 END)`
    : '0',
  candidates.includes('DATE')
    ? `count(CASE WHEN TRY_CAST(${v} AS TIMESTAMP) <> TRY_CAST(TRY_CAST(${v} AS DATE) AS TIMESTAMP) THEN 1 END)`
    : '0',
];

/** A column no cell of which was read (UNPIVOT leaves out a column whose every cell is null). */
const NOTHING: ColumnCounts = { nonEmpty: 0, holds: new Map(), fractional: 0, timed: 0 };

/** One column's counts, read back from its run of `checksOf`'s aggregates. */
const countsOf = (values: readonly unknown[], candidates: readonly Candidate[]): ColumnCounts => {
  const n = values.map(Number);
  return {
    nonEmpty: n[0]!,
    holds: new Map(candidates.map((t, i) => [t, n[1 + i]!])),
    fractional: n[1 + candidates.length]!,
    timed: n[2 + candidates.length]!,
  };
};

/**
 * Per column, the counts of one pass over `from`. Narrow files in one SELECT of column-wise
 * aggregates, each column checking only its own candidates; wide ones by unpivoting, which stays
 * linear in the number of cells (thousands of aggregate expressions in one SELECT cost DuckDB
 * minutes to plan), checking the candidates any column still has.
 */
const countColumns = async (
  c: DuckDBConnection,
  from: string,
  names: readonly string[],
  candidatesOf: (name: string) => readonly Candidate[],
): Promise<Map<string, ColumnCounts>> => {
  if (names.length <= WIDE) {
    const checks = names.flatMap((n) => checksOf(`nullif(trim(${quoteIdent(n)}), '')`, candidatesOf(n)));
    const row = (await c.runAndReadAll(`SELECT ${checks.join(', ')} FROM ${from}`)).getRowsJS()[0]!;
    let at = 0;
    return new Map(
      names.map((n) => {
        const width = checksOf('v', candidatesOf(n)).length;
        at += width;
        return [n, countsOf(row.slice(at - width, at), candidatesOf(n))];
      }),
    );
  }
  const any = CANDIDATES.filter((t) => names.some((n) => candidatesOf(n).includes(t)));
  const rows = (
    await c.runAndReadAll(
      `SELECT col, ${checksOf('v', any).join(', ')}
         FROM (SELECT col, nullif(trim(raw), '') AS v FROM (UNPIVOT (SELECT * FROM ${from}) ON COLUMNS(*) INTO NAME col VALUE raw))
        GROUP BY col`,
    )
  ).getRowsJS();
  return new Map(rows.map((r) => [String(r[0]), countsOf(r.slice(1), any)]));
};

/**
 * The candidates a part of the file leaves possible for the whole of it (`rows` rows). Exact, never
 * a guess: cells that fail a type, or have a fraction or a time of day, only add up, so a type the
 * part already rules out cannot fit the whole (nor can one failing on more cells than the whole
 * file may have fail on: a share of its rows, which bound its non-empty cells).
 */
export const stillPossible = (part: ColumnCounts, rows: number): Candidate[] =>
  CANDIDATES.filter((t) => {
    if (t === 'BIGINT' && part.fractional > 0) return false;
    if (t === 'DATE' && part.timed > 0) return false;
    return part.nonEmpty - (part.holds.get(t) ?? 0) <= rows * TOLERATED_INVALID;
  });

/** The first candidate the whole column's counts show fits, else VARCHAR. */
const typeOf = (counts: ColumnCounts): Candidate | 'VARCHAR' => {
  if (counts.nonEmpty === 0) return 'VARCHAR';
  const fits = (t: Candidate) => {
    const holds = counts.holds.get(t);
    return (
      holds !== undefined &&
      holds >= counts.nonEmpty * (1 - TOLERATED_INVALID) &&
      (t !== 'BIGINT' || counts.fractional === 0) &&
      (t !== 'DATE' || counts.timed === 0)
    );
  };
  return CANDIDATES.find(fits) ?? 'VARCHAR';
};

/**
 * How a file's sample narrows the checks of the full pass. Failing conversions are what cost
 * (measured: 1M rows × 5 columns, every candidate on every cell, 6.8 s at load 3.7, against 0.2 s
 * to read the file), and most candidates of most columns fail on most cells: a part of the file
 * rules them out first, so the full pass converts mostly cells that convert.
 */
export type Sampling = {
  /** Files with fewer rows are checked in one pass (the sample would cost more than it saves). */
  readonly minRows: number;
  /** The sample's share of the rows: above TOLERATED_INVALID / share of its cells failing rules a type out. */
  readonly share: number;
  readonly possible: typeof stillPossible;
};

export const DEFAULT_SAMPLING: Sampling = { minRows: 100_000, share: 0.05, possible: stillPossible };

/**
 * Each text column's type, read from every cell (a few bad cells, such as "640,56" in a number
 * column, do not demote the column: they load as null). Large files first check a sample of their
 * rows, which rules types out exactly (`stillPossible`): the answer is the one-pass answer.
 */
export const inferColumnTypes = async (
  c: DuckDBConnection,
  from: string,
  names: readonly string[],
  rowCount: number,
  sampling: Sampling = DEFAULT_SAMPLING,
): Promise<{ name: string; type: Candidate | 'VARCHAR' }[]> => {
  let candidatesOf: (name: string) => readonly Candidate[] = () => CANDIDATES;
  if (rowCount >= sampling.minRows) {
    const sampled = Math.max(1, Math.ceil(rowCount * sampling.share));
    const part = await countColumns(c, `(SELECT * FROM ${from} LIMIT ${sampled})`, names, () => CANDIDATES);
    const possible = new Map(names.map((n) => [n, sampling.possible(part.get(n) ?? NOTHING, rowCount)]));
    candidatesOf = (n) => possible.get(n)!;
  }
  const counts = await countColumns(c, from, names, candidatesOf);
  return names.map((name) => ({ name, type: typeOf(counts.get(name) ?? NOTHING) }));
};
