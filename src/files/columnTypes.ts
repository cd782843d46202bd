import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/quoting';

/** Types a text column can take, tried in order; the first that fits nearly every value wins. */
const CANDIDATES = ['BOOLEAN', 'BIGINT', 'DOUBLE', 'DATE', 'TIMESTAMP'] as const;
export type Candidate = (typeof CANDIDATES)[number];
/** A column keeps a type when at most this share of its non-empty cells fail to convert (they load as null). */
const TOLERATED_INVALID = 0.02;

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

/**
 * `TRY_CAST(v AS TIMESTAMP)`, tried only where `v` converts to a DATE: DuckDB reads a timestamp's
 * date first, so every text it takes as a TIMESTAMP it takes as a DATE too (checked by
 * test/files/column-types-timestamp.property.spec.ts), and the answer is TRY_CAST's. A failing
 * conversion to TIMESTAMP is the dearest of the checks (about 400 ns a cell, twice a DATE's, which
 * is computed anyway): most cells of most columns fail it, and now fail only the DATE one.
 */
export const timestampOf = (v: string) =>
  `CASE WHEN TRY_CAST(${v} AS DATE) IS NOT NULL THEN TRY_CAST(${v} AS TIMESTAMP) END`;

/**
 * A cell a BOOLEAN column holds: `true` or `false`, in any case. DuckDB also casts 1/0, t/f, y/n and
 * yes/no, which made a column of 0/1 flags (a churn or fraud label) a BOOLEAN nobody can sum or
 * average; MindsDB reads files with pandas, whose booleans are only true and false, and 0/1 integers.
 */
const booleanOf = (v: string) =>
  `CASE WHEN lower(${v}) IN ('true', 'false') THEN TRY_CAST(${v} AS BOOLEAN) END`;

/** `TRY_CAST(v AS t)`, through `booleanOf` for BOOLEAN and `timestampOf` for TIMESTAMP. */
const converted = (v: string, t: Candidate) =>
  t === 'BOOLEAN' ? booleanOf(v) : t === 'TIMESTAMP' ? timestampOf(v) : `TRY_CAST(${v} AS ${t})`;

/** The aggregates that count a column's cells (`v`, trimmed, empty as null) for these candidates. */
const checksOf = (v: string, candidates: readonly Candidate[]) => [
  `count(${v})`,
  ...candidates.map((t) => `count(${converted(v, t)})`),
  candidates.includes('BIGINT')
    ? `count(CASE WHEN TRY_CAST(${v} AS DOUBLE) <> trunc(TRY_CAST(${v} AS DOUBLE)) THEN 1 END)`
    : '0',
  candidates.includes('DATE')
    ? `count(CASE WHEN ${timestampOf(v)} <> TRY_CAST(TRY_CAST(${v} AS DATE) AS TIMESTAMP) THEN 1 END)`
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
 * Per column, the counts of one pass over `from`, and with `rows` the number of rows. Narrow files
 * in one SELECT of column-wise aggregates (the row count among them), each column checking only its
 * own candidates; wide ones by unpivoting, which stays linear in the number of cells (thousands of
 * aggregate expressions in one SELECT cost DuckDB minutes to plan), checking the candidates any
 * column still has, their rows counted by a pass of their own (an unpivot leaves out empty cells).
 */
const countRowsAndColumns = async (
  c: DuckDBConnection,
  from: string,
  names: readonly string[],
  candidatesOf: (name: string) => readonly Candidate[],
  rows: boolean,
): Promise<{ rows: number; counts: Map<string, ColumnCounts> }> => {
  if (names.length <= WIDE) {
    const checks = names.flatMap((n) => checksOf(`nullif(trim(${quoteIdent(n)}), '')`, candidatesOf(n)));
    if (rows) checks.unshift('count(*)');
    const row = (await c.runAndReadAll(`SELECT ${checks.join(', ')} FROM ${from}`)).getRowsJS()[0]!;
    let at = rows ? 1 : 0;
    const counts = new Map(
      names.map((n) => {
        const width = checksOf('v', candidatesOf(n)).length;
        at += width;
        return [n, countsOf(row.slice(at - width, at), candidatesOf(n))] as const;
      }),
    );
    return { rows: rows ? Number(row[0]) : NaN, counts };
  }
  const counted = rows
    ? Number((await c.runAndReadAll(`SELECT count(*) FROM ${from}`)).getRowsJS()[0]![0])
    : NaN;
  const any = CANDIDATES.filter((t) => names.some((n) => candidatesOf(n).includes(t)));
  const found = (
    await c.runAndReadAll(
      `SELECT col, ${checksOf('v', any).join(', ')}
         FROM (SELECT col, nullif(trim(raw), '') AS v FROM (UNPIVOT (SELECT * FROM ${from}) ON COLUMNS(*) INTO NAME col VALUE raw))
        GROUP BY col`,
    )
  ).getRowsJS();
  return { rows: counted, counts: new Map(found.map((r) => [String(r[0]), countsOf(r.slice(1), any)])) };
};

/** Per column, the counts of one pass over `from` (see countRowsAndColumns). */
const countColumns = async (
  c: DuckDBConnection,
  from: string,
  names: readonly string[],
  candidatesOf: (name: string) => readonly Candidate[],
): Promise<Map<string, ColumnCounts>> =>
  (await countRowsAndColumns(c, from, names, candidatesOf, false)).counts;

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

const DEFAULT_SAMPLING: Sampling = { minRows: 100_000, share: 0.05, possible: stillPossible };

/**
 * The sample's rows and the bound it rules types out by are taken from an estimate of the rows
 * made before counting them; this much above it, an estimate a little short still rules out what
 * the counted rows rule out (a second pass is then not needed).
 */
const ESTIMATE_MARGIN = 1.25;

/**
 * `inferColumnTypes` and the row count in one full pass (besides the sample), for a file of about
 * `rowsAbout` rows (an estimate: see `estimateRows` in load.ts). The sample's size and what it
 * rules out go by the estimate, so the full pass can count the rows while it checks the cells;
 * then every type the sample ruled out is checked to be ruled out by the counted rows too, and a
 * column for which one is not (the estimate was short) is counted again in a second pass, with the
 * candidates the counted rows leave it. The answer is `inferColumnTypes`'s for the counted rows:
 * the one-pass answer, whatever the estimate.
 */
export const countAndInferColumnTypes = async (
  c: DuckDBConnection,
  from: string,
  names: readonly string[],
  rowsAbout: number,
  sampling: Sampling = DEFAULT_SAMPLING,
): Promise<{ rowCount: number; columns: { name: string; type: Candidate | 'VARCHAR' }[] }> => {
  const typed = (counts: ReadonlyMap<string, ColumnCounts>) =>
    names.map((name) => ({ name, type: typeOf(counts.get(name) ?? NOTHING) }));
  if (rowsAbout < sampling.minRows) {
    const { rows, counts } = await countRowsAndColumns(c, from, names, () => CANDIDATES, true);
    return { rowCount: rows, columns: typed(counts) };
  }
  const sampled = Math.max(1, Math.ceil(rowsAbout * sampling.share));
  const part = await countColumns(c, `(SELECT * FROM ${from} LIMIT ${sampled})`, names, () => CANDIDATES);
  const partOf = (n: string) => part.get(n) ?? NOTHING;
  const bound = Math.ceil(rowsAbout * ESTIMATE_MARGIN);
  const guessed = new Map(names.map((n) => [n, sampling.possible(partOf(n), bound)]));
  const { rows, counts } = await countRowsAndColumns(c, from, names, (n) => guessed.get(n)!, true);
  // What the counted rows leave possible, where the estimate ruled out more: counted again.
  const possible = new Map(names.map((n) => [n, sampling.possible(partOf(n), rows)]));
  const short = names.filter((n) => possible.get(n)!.some((t) => !guessed.get(n)!.includes(t)));
  if (short.length > 0) {
    const again = await countColumns(c, from, short, (n) => possible.get(n)!);
    for (const n of short) counts.set(n, again.get(n) ?? NOTHING);
  }
  return { rowCount: rows, columns: typed(counts) };
};

/**
 * Each text column's type, read from every cell (a few bad cells, such as "640,56" in a number
 * column, do not demote the column: they load as null), for a file whose `rowCount` rows are known.
 * Large files first check a sample of their rows, which rules types out exactly (`stillPossible`):
 * the answer is the one-pass answer (`countAndInferColumnTypes`, the count taken as the estimate).
 */
export const inferColumnTypes = async (
  c: DuckDBConnection,
  from: string,
  names: readonly string[],
  rowCount: number,
  sampling: Sampling = DEFAULT_SAMPLING,
): Promise<{ name: string; type: Candidate | 'VARCHAR' }[]> =>
  (await countAndInferColumnTypes(c, from, names, rowCount, sampling)).columns;
