/**
 * Partial inputs and per-row confidence for table models (issue 59).
 *
 * A row that lacks some of the training features (a WHERE clause that names four of seven
 * columns), names a category the model did not learn, or gives a number outside the training
 * range is not sent down the trees as "missing" (a value they never saw in training). Instead the
 * model answers what it would answer averaged over plausible values of what is missing: the
 * missing inputs are filled from each of the K training rows nearest on the inputs given (a
 * reference sample kept in the artifact, distances weighted by how much each column tells of the
 * target), the K filled rows are predicted and their predictions averaged.
 *
 * The spread of those K predictions says how much the missing inputs matter here. With the local
 * difficulty of the row (the mean absolute error of the model on the dev rows nearest to it), it
 * makes the row's scale σ = √(difficulty² + spread²); the conformal scores are |y − ŷ| / σ on
 * calibration rows, whole and with inputs masked at random, and a row's interval is ŷ ± q·σ. So an
 * interval widens where inputs are missing, unseen or out of range, and narrows where the model
 * is sure.
 */
import type { ColumnEncoding } from './dataset';
import { featureNames } from './dataset';
import { sampleOf, seededRandom } from './random';

/** Neighbours a missing input is filled from (and predictions averaged over). */
const NEIGHBOURS = 16;
/** Training rows kept to fill missing inputs from: at most this many, and at most this many cells. */
const MAX_REFERENCE_ROWS = 2000;
const MAX_REFERENCE_CELLS = 60_000;
/** Dev rows (with the model's error on them) kept to tell a row's difficulty. */
const MAX_DIFFICULTY_ROWS = 256;
const MAX_DIFFICULTY_CELLS = 15_000;
const DIFFICULTY_NEIGHBOURS = 16;
/** Pseudo-rows of the global mean error a row's difficulty is shrunk towards. */
const DIFFICULTY_PRIOR = 4;
/** A column missing (or in the fallback category) in at least this share of training rows is
 * left as it is: the trees learnt what a missing cell means there. */
const LEARNT_MISSING_SHARE = 0.05;
const RANK_CUTS = 64;
/** Calibration rows scored whole, and (each) masked at 25% and at 50%. */
export const MAX_WHOLE_CALIBRATION = 5000;
export const MAX_MASKED_CALIBRATION = 1000;
export const MASKED_SHARES = [0.25, 0.5] as const;

/** A cell of a row, as the model sees it. */
const KNOWN = 0;
export const MISSING = 1;
const UNSEEN = 2;
const OUT_OF_RANGE = 3;

export type PartialColumn = {
  column: string;
  /** The column's features in the encoded row. */
  start: number;
  width: number;
  /** How rows are compared on it: rank of a number, equality of a category, or not at all. */
  compare: 'rank' | 'category' | 'none';
  /** How much the column tells of the target (share of its variance explained, 0–1). */
  weight: number;
  /** Whether a missing (or unlearnt) cell is filled: false when training had many of them. */
  fill: boolean;
  /** Sorted cut points of the compared feature: its rank is the share of cuts below it. */
  cuts: number[];
  /** Numbers: the training range (null otherwise). */
  min: number | null;
  max: number | null;
};

export type PartialModel = {
  neighbours: number;
  columns: PartialColumn[];
  /** Encoded training rows (row-major, `null` for NaN) missing inputs are filled from. */
  reference: (number | null)[];
  /** Regression: dev rows and the model's absolute error on them (local difficulty). */
  difficulty: {
    features: (number | null)[];
    errors: number[];
    neighbours: number;
    meanError: number;
  } | null;
  /**
   * Regression: sorted |y − ŷ| / σ on the calibration rows, whole and masked, one list per group of
   * rows (Mondrian conformal prediction): whole rows, rows lacking up to a third of their fillable
   * inputs, rows lacking more (`groupOf`).
   */
  scores: number[][] | null;
};

/** Fewer scores than this in a group: its rows use every group's scores together. */
export const MIN_GROUP_SCORES = 50;

/** A row's calibration group: 0 whole, 1 up to a third of its fillable inputs not known, 2 more. */
export const groupOf = (status: Uint8Array | null, r: number, columns: readonly PartialColumn[]) => {
  if (!status) return 0;
  const C = columns.length;
  let fillable = 0;
  let unknown = 0;
  for (let c = 0; c < C; c++) {
    if (!columns[c]!.fill) continue;
    fillable++;
    if (status[r * C + c] !== KNOWN) unknown++;
  }
  return unknown === 0 ? 0 : 3 * unknown <= fillable ? 1 : 2;
};

// Module-level references: inside vm contexts (jest) every global lookup in a hot loop is slow.
const INFINITY = Infinity;
const { sqrt } = Math;

const toJson = (x: ArrayLike<number>) => Array.from(x, (v) => (Number.isNaN(v) ? null : v));
const fromJson = (x: readonly (number | null)[]) => Float64Array.from(x, (v) => (v === null ? NaN : v));

/** The feature a column is compared on (dates: their day number). */
const comparedFeature = (e: ColumnEncoding, start: number) => (e.kind === 'date' ? start + 3 : start);

const compareOf = (e: ColumnEncoding): PartialColumn['compare'] =>
  e.kind === 'number' || e.kind === 'date'
    ? 'rank'
    : e.kind === 'target' || e.kind === 'onehot'
      ? 'category'
      : 'none';

/** A category block's code: the target mean, or the index of the hot column (−1: none). */
const categoryCode = (e: ColumnEncoding, X: Float64Array, at: number, width: number) => {
  if (e.kind === 'target') return X[at]!;
  for (let j = 0; j < width; j++) if (X[at + j] === 1) return j;
  return -1;
};

/** Share of variance of y explained by groups (η²). */
const explained = (groups: Float64Array, y: ArrayLike<number>, rows: Int32Array) => {
  const sums = new Map<number, { n: number; s: number }>();
  let total = 0;
  for (const i of rows) total += y[i]!;
  const mean = total / rows.length;
  let tss = 0;
  for (let k = 0; k < rows.length; k++) {
    const v = y[rows[k]!]!;
    tss += (v - mean) ** 2;
    const g = groups[k]!;
    const e = sums.get(g);
    if (e) {
      e.n++;
      e.s += v;
    } else sums.set(g, { n: 1, s: v });
  }
  if (tss <= 0) return 0;
  let between = 0;
  for (const { n, s } of sums.values()) between += n * (s / n - mean) ** 2;
  // Many small groups explain variance by chance: discount by the groups' degrees of freedom.
  const adjusted = (between - (sums.size - 1) * (tss / rows.length)) / tss;
  return Math.max(0, Math.min(1, adjusted));
};

const rankOf = (cuts: ArrayLike<number>, v: number) => {
  if (v !== v) return NaN;
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cuts[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return cuts.length ? lo / cuts.length : 0;
};

/**
 * A ranked column's cut points, range and missing count on the sample rows `stats`, its rank
 * groups (sixteenths) written into `groups`. The sample's values are read once, into a typed array
 * sorted natively: reading them by row twice and sorting a boxed array took about 0.1 s of
 * training 1M × 10. (A typed sort orders −0 before 0 where a comparator kept them as found; the
 * cuts compare the same and are written the same.)
 */
const rankColumn = (values: Float64Array, stats: Int32Array, number: boolean, groups: Float64Array) => {
  const sampled = new Float64Array(stats.length);
  for (let k = 0; k < stats.length; k++) sampled[k] = values[stats[k]!]!;
  const sorted = sampled.filter((v) => !Number.isNaN(v)).sort();
  let cuts: number[] = [];
  let min: number | null = null;
  let max: number | null = null;
  if (sorted.length) {
    const at = (k: number) => sorted[Math.floor((k * (sorted.length - 1)) / (RANK_CUTS - 1))]!;
    cuts = Array.from(new Set(Array.from({ length: RANK_CUTS }, (_, k) => at(k))));
    if (number) {
      min = sorted[0]!;
      max = sorted[sorted.length - 1]!;
    }
  }
  let unusual = 0;
  for (let k = 0; k < stats.length; k++) {
    const v = sampled[k]!;
    if (Number.isNaN(v)) unusual++;
    groups[k] = Number.isNaN(v) ? -1 : Math.floor(rankOf(cuts, v) * 16);
  }
  return { cuts, min, max, unusual };
};

/**
 * What the artifact keeps to fill partial rows: the columns' weights, ranks and ranges, and a
 * reference sample of encoded training rows. `features` are the encoded columns, `rows` the
 * training rows (a sample is taken), `y` the target (class index for classes, `classes` of them).
 */
export const planPartial = (
  encodings: readonly ColumnEncoding[],
  features: readonly Float64Array[],
  train: Int32Array,
  y: Float64Array,
  classes: number,
  seed: number,
): PartialModel => {
  const d = features.length;
  const random = seededRandom(seed ^ 0x5bd1e995);
  const pick = (rows: Int32Array, max: number) => sampleOf(rows, max, random);
  const stats = pick(train, 20_000);
  const targets: Float64Array[] = [];
  if (classes <= 2) targets.push(y);
  else for (let k = 0; k < classes; k++) targets.push(Float64Array.from(y, (v) => (v === k ? 1 : 0)));
  const columns: PartialColumn[] = [];
  let start = 0;
  for (const e of encodings) {
    const width = featureNames(e).length;
    const compare = compareOf(e);
    const f = comparedFeature(e, start);
    const groups = new Float64Array(stats.length);
    let cuts: number[] = [];
    let min: number | null = null;
    let max: number | null = null;
    let unusual = 0;
    if (compare === 'rank') {
      ({ cuts, min, max, unusual } = rankColumn(features[f]!, stats, e.kind === 'number', groups));
    } else if (compare === 'category') {
      const fallback = e.kind === 'target' ? e.fallback : NaN;
      for (let k = 0; k < stats.length; k++) {
        const i = stats[k]!;
        let code: number;
        if (e.kind === 'target') code = features[start]![i]!;
        else {
          code = -1;
          for (let j = 0; j < width; j++) if (features[start + j]![i] === 1) code = j;
        }
        if (Number.isNaN(code) || code === -1 || code === fallback) unusual++;
        groups[k] = Number.isNaN(code) ? -2 : code;
      }
    }
    const weight =
      compare === 'none' ? 0 : targets.reduce((s, t) => s + explained(groups, t, stats), 0) / targets.length;
    columns.push({
      column: e.column,
      start,
      width,
      compare,
      weight,
      fill: compare !== 'none' && unusual < LEARNT_MISSING_SHARE * stats.length,
      cuts,
      min,
      max,
    });
    start += width;
  }
  // Weights relative to the most telling column, none below a hundredth of it.
  const top = Math.max(0, ...columns.map((c) => c.weight));
  for (const c of columns) if (c.compare !== 'none') c.weight = top > 0 ? Math.max(c.weight / top, 0.01) : 1;
  const referenceRows = pick(
    train,
    Math.max(1, Math.min(MAX_REFERENCE_ROWS, Math.floor(MAX_REFERENCE_CELLS / Math.max(d, 1)))),
  );
  const reference = new Float64Array(referenceRows.length * d);
  for (let r = 0; r < referenceRows.length; r++)
    for (let j = 0; j < d; j++) reference[r * d + j] = features[j]![referenceRows[r]!]!;
  return {
    neighbours: Math.min(NEIGHBOURS, referenceRows.length),
    columns,
    reference: toJson(reference),
    difficulty: null,
    scores: null,
  };
};

/** How many dev rows a regression keeps for its difficulty. */
export const difficultyRows = (dev: Int32Array, d: number, seed: number) => {
  const max = Math.max(1, Math.min(MAX_DIFFICULTY_ROWS, Math.floor(MAX_DIFFICULTY_CELLS / Math.max(d, 1))));
  return sampleOf(dev, max, seededRandom(seed ^ 0x1b873593));
};

export const withDifficulty = (p: PartialModel, X: Float64Array, errors: ArrayLike<number>): PartialModel => {
  let mean = 0;
  for (let i = 0; i < errors.length; i++) mean += errors[i]!;
  mean /= Math.max(1, errors.length);
  return {
    ...p,
    difficulty: {
      features: toJson(X),
      errors: Array.from(errors),
      neighbours: Math.min(DIFFICULTY_NEIGHBOURS, errors.length),
      meanError: mean,
    },
  };
};

/** Masks each fillable column of each row with probability `share` (seeded): a status matrix. */
export const randomMask = (p: PartialModel, n: number, share: number, seed: number) => {
  const C = p.columns.length;
  const status = new Uint8Array(n * C);
  const random = seededRandom(seed);
  for (let r = 0; r < n; r++)
    for (let c = 0; c < C; c++) if (random() < share && p.columns[c]!.fill) status[r * C + c] = MISSING;
  return status;
};

/** The rows to walk for a batch, and how to fold their outputs back into one per input row. */
export type Expansion = {
  /** Rows to score, row-major. */
  X: Float64Array;
  n: number;
  /** Per input row: its first expanded row, how many give its value (A), how many its spread (B). */
  first: Int32Array;
  counts: Int32Array;
  spreadCounts: Int32Array;
};

/** What the runtime's steps read of a partial model: its columns, their encodings and the row width. */
type ColumnLayout = {
  columns: readonly PartialColumn[];
  encodings: readonly ColumnEncoding[];
  /** Features per encoded row. */
  d: number;
  /** Per column: its weight in a distance, and whether it is compared by rank (typed for the scan). */
  weights: Float64Array;
  ranked: Uint8Array;
};

/**
 * Rows whose keys a row is compared with: `rows` rows of `keys`, `columns` keys each, and per
 * column its rows in key order (`byKey`), so a search can start where the row's key is.
 */
type Neighbourhood = { keys: Float64Array; rows: number; byKey: KeyOrder[] };

/**
 * A column's rows with a key (rank or category code) ascending by key, those keys, and the rows
 * without one.
 */
type KeyOrder = { rows: Int32Array; keys: Float64Array; keyless: Int32Array };

const neighbourhood = (columns: number, keys: Float64Array, rows: number): Neighbourhood => {
  const C = columns;
  const byKey = Array.from({ length: C }, (_, c): KeyOrder => {
    const all = Int32Array.from({ length: rows }, (_, i) => i);
    const keyed = all.filter((i) => keys[i * C + c] === keys[i * C + c]);
    keyed.sort((a, b) => keys[a * C + c]! - keys[b * C + c]! || a - b);
    return {
      rows: keyed,
      keys: Float64Array.from(keyed, (i) => keys[i * C + c]!),
      keyless: all.filter((i) => keys[i * C + c] !== keys[i * C + c]),
    };
  });
  return { keys, rows, byKey };
};

/** The reference rows missing inputs are filled from. */
type FillSource = Neighbourhood & { reference: Float64Array; neighbours: number };

/** Regression: the dev rows a row's difficulty is read from. */
type DifficultySource = Neighbourhood & { model: NonNullable<PartialModel['difficulty']> };

/** Per column, the comparable key of every row of a matrix (rank, or category code). */
const keysOf = ({ columns, encodings, d }: ColumnLayout, X: Float64Array, n: number) => {
  const C = columns.length;
  const keys = new Float64Array(n * C);
  for (let c = 0; c < C; c++) {
    const col = columns[c]!;
    const e = encodings[c]!;
    for (let r = 0; r < n; r++) {
      const at = r * d + col.start;
      keys[r * C + c] =
        col.compare === 'rank'
          ? rankOf(col.cuts, X[r * d + comparedFeature(e, col.start)]!)
          : col.compare === 'category'
            ? categoryCode(e, X, at, col.width)
            : 0;
    }
  }
  return keys;
};

/** A one-hot column's missing cell told from an unseen one (c: column, r: row). */
type RawGiven = (c: number, r: number) => boolean;

/** The status of one compared cell at `at` (see statusOf); `raw` is asked only of one-hot cells. */
const cellStatus = (
  col: PartialColumn,
  e: ColumnEncoding,
  X: Float64Array,
  at: number,
  raw: RawGiven | undefined,
  c: number,
  r: number,
) => {
  if (e.kind === 'number') {
    const v = X[at]!;
    if (Number.isNaN(v)) return col.fill ? MISSING : KNOWN;
    return (col.min !== null && v < col.min) || (col.max !== null && v > col.max) ? OUT_OF_RANGE : KNOWN;
  }
  if (e.kind === 'date') return Number.isNaN(X[at]!) && col.fill ? MISSING : KNOWN;
  if (e.kind === 'target') {
    if (!col.fill) return KNOWN;
    const v = X[at]!;
    return Number.isNaN(v) ? MISSING : v === e.fallback ? UNSEEN : KNOWN;
  }
  if (e.kind === 'onehot' && col.fill && categoryCode(e, X, at, col.width) === -1)
    return raw?.(c, r) ? UNSEEN : MISSING;
  return KNOWN;
};

/**
 * Each cell's status from the encoded row: missing (NaN, a one-hot row with no class), a category
 * the model did not learn (the fallback), a number outside the training range; `raw` tells a
 * one-hot column's missing cell from an unseen one. Null when every cell of every row is known.
 */
const statusOf = ({ columns, encodings, d }: ColumnLayout, X: Float64Array, n: number, raw?: RawGiven) => {
  const C = columns.length;
  let status: Uint8Array | null = null;
  for (let c = 0; c < C; c++) {
    const col = columns[c]!;
    if (col.compare === 'none') continue;
    const e = encodings[c]!;
    for (let r = 0; r < n; r++) {
      const s = cellStatus(col, e, X, r * d + col.start, raw, c, r);
      if (s !== KNOWN) (status ??= new Uint8Array(n * C))[r * C + c] = s;
    }
  }
  return status;
};

/**
 * Indices of the `k` rows of `near` nearest to row `r` of `keys`, nearest first, ties to the lower
 * index: the first k in (distance, index) order.
 *
 * The rows are visited outwards from the row's key on its most telling compared column (by rank,
 * or the rows of the same category first): a row's distance is at least that column's term, so a
 * side of the scan ends once the term alone exceeds the k-th distance. Distances are summed column
 * by column in the same order for every row, and ties are settled by index, so the answer is the
 * one a scan of every row in index order gives (that scan cost 57% of a partial row's prediction,
 * profiled on home_rentals).
 */
const nearest = (
  { weights, ranked }: Pick<ColumnLayout, 'weights' | 'ranked'>,
  keys: Float64Array,
  r: number,
  known: Uint8Array,
  near: Neighbourhood,
  k: number,
) => {
  const C = weights.length;
  const { keys: refKeys, rows } = near;
  const best = new Int32Array(k).fill(-1);
  const dist = new Float64Array(k).fill(INFINITY);
  // The columns compared, and the row's key on each (a missing key compares with nothing).
  const compared: number[] = [];
  let pivot = -1;
  for (let c = 0; c < C; c++) {
    const a = keys[r * C + c]!;
    if (!(known[c] && a === a)) continue;
    compared.push(c);
    if (weights[c]! > 0 && (pivot < 0 || weights[c]! > weights[pivot]!)) pivot = c;
  }
  const m = compared.length;
  const cols = Int32Array.from(compared);
  const own = Float64Array.from(compared, (c) => keys[r * C + c]!);
  // Visited first, in this order: every row (no weighted column to start from) or the rows without
  // a key on the pivot; then the pivot's keyed rows outwards from the row's key.
  const order = pivot < 0 ? null : near.byKey[pivot]!;
  const first = order ? order.keyless : null;
  const firstCount = first ? first.length : rows;
  const sorted = order ? order.keys : null;
  const key = pivot < 0 ? 0 : keys[r * C + pivot]!;
  const w = pivot < 0 ? 0 : weights[pivot]!;
  const pivotRanked = pivot >= 0 && ranked[pivot] === 1;
  let hi = 0;
  if (sorted) {
    let top = sorted.length;
    while (hi < top) {
      const mid = (hi + top) >> 1;
      if (sorted[mid]! < key) hi = mid + 1;
      else top = mid;
    }
  }
  let lo = hi - 1;
  let q = 0;
  // One loop, no closures: the search runs for every row of every batch.
  for (;;) {
    let i: number;
    const worst = dist[k - 1]!;
    if (q < firstCount) i = first ? first[q++]! : q++;
    else if (!sorted) break;
    else {
      // A row's distance is at least its pivot term; past a term above the k-th distance, none comes in.
      let down = INFINITY;
      let up = INFINITY;
      if (lo >= 0) {
        const diff = key - sorted[lo]!;
        down = pivotRanked ? w * diff * diff : diff === 0 ? 0 : w;
      }
      if (hi < sorted.length) {
        const diff = key - sorted[hi]!;
        up = pivotRanked ? w * diff * diff : diff === 0 ? 0 : w;
      }
      if (down <= up) {
        if (down > worst) break;
        i = order!.rows[lo--]!;
      } else {
        if (up > worst) break;
        i = order!.rows[hi++]!;
      }
    }
    const at = i * C;
    let s = 0;
    for (let j = 0; j < m && s <= worst; j++) {
      const c = cols[j]!;
      const b = refKeys[at + c]!;
      if (b !== b) s += weights[c]!;
      else if (ranked[c]) {
        const diff = own[j]! - b;
        s += weights[c]! * diff * diff;
      } else if (own[j] !== b) s += weights[c]!;
    }
    // Kept if it comes before the k-th in (distance, index) order.
    if (s > worst || (s === worst && i > best[k - 1]!)) continue;
    let j = k - 1;
    while (j > 0 && (dist[j - 1]! > s || (dist[j - 1] === s && best[j - 1]! > i))) {
      dist[j] = dist[j - 1]!;
      best[j] = best[j - 1]!;
      j--;
    }
    dist[j] = s;
    best[j] = i;
  }
  return best;
};

/**
 * The neighbour search on keys alone (its property spec): the `k` of `rows` rows of `refKeys`
 * nearest to row `r` of `keys` on the columns `known` marks, by `weights`, `ranked` columns by
 * squared difference and the others by equality.
 */
export const nearestOnKeys = (
  columns: { weights: Float64Array; ranked: Uint8Array },
  refKeys: Float64Array,
  rows: number,
  keys: Float64Array,
  r: number,
  known: Uint8Array,
  k: number,
) => nearest(columns, keys, r, known, neighbourhood(columns.ranked.length, refKeys, rows), k);

/** Per column, 1 when row `r` gives a key to compare on it. */
const knownColumns = (columns: readonly PartialColumn[], status: Uint8Array | null, r: number) => {
  const C = columns.length;
  const known = new Uint8Array(C);
  for (let c = 0; c < C; c++)
    known[c] = columns[c]!.compare !== 'none' && (!status || status[r * C + c] === KNOWN) ? 1 : 0;
  return known;
};

/**
 * Per input row: whether it needs filling (a missing or unseen cell) or a spread (a cell out of
 * range), its first expanded row and how many it takes of each kind.
 */
const expansionPlan = (status: Uint8Array, n: number, C: number, K: number) => {
  const fills = new Uint8Array(n);
  const ranges = new Uint8Array(n);
  const first = new Int32Array(n);
  const counts = new Int32Array(n);
  const spreadCounts = new Int32Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < C; c++) {
      const s = status[r * C + c]!;
      if (s === MISSING || s === UNSEEN) fills[r] = 1;
      else if (s === OUT_OF_RANGE) ranges[r] = 1;
    }
    first[r] = total;
    counts[r] = fills[r] ? K : 1;
    spreadCounts[r] = ranges[r] ? K : 0;
    total += counts[r]! + spreadCounts[r]!;
  }
  return { fills, ranges, first, counts, spreadCounts, total };
};

/**
 * Writes `row` once per neighbour into `out` from `at`, its missing and unseen cells (and, with
 * `withRange`, its out-of-range ones) taken from that neighbour; returns where the next row goes.
 */
const writeFilled = (
  { columns, d }: ColumnLayout,
  out: Float64Array,
  at: number,
  row: Float64Array,
  rowStatus: Uint8Array,
  reference: Float64Array,
  neighbours: Int32Array,
  withRange: boolean,
) => {
  const C = columns.length;
  for (const i of neighbours) {
    out.set(row, at);
    for (let c = 0; c < C; c++) {
      const s = rowStatus[c]!;
      if (s === MISSING || s === UNSEEN || (withRange && s === OUT_OF_RANGE)) {
        const col = columns[c]!;
        out.set(reference.subarray(i * d + col.start, i * d + col.start + col.width), at + col.start);
      }
    }
    at += d;
  }
  return at;
};

/** The rows to score: a whole row as it is; a partial row as K filled rows (and K more for its spread). */
const expand = (
  layout: ColumnLayout,
  fill: FillSource,
  X: Float64Array,
  n: number,
  status: Uint8Array,
): Expansion => {
  const { d } = layout;
  const C = layout.columns.length;
  const K = fill.neighbours;
  const { fills, ranges, first, counts, spreadCounts, total } = expansionPlan(status, n, C, K);
  const out = new Float64Array(total * d);
  const keys = keysOf(layout, X, n);
  for (let r = 0; r < n; r++) {
    const row = X.subarray(r * d, (r + 1) * d);
    if (!fills[r] && !ranges[r]) {
      out.set(row, first[r]! * d);
      continue;
    }
    const neighbours = nearest(layout, keys, r, knownColumns(layout.columns, status, r), fill, K);
    const rowStatus = status.subarray(r * C, (r + 1) * C);
    let at = first[r]! * d;
    if (fills[r]) at = writeFilled(layout, out, at, row, rowStatus, fill.reference, neighbours, false);
    else {
      out.set(row, at);
      at += d;
    }
    if (ranges[r]) writeFilled(layout, out, at, row, rowStatus, fill.reference, neighbours, true);
  }
  return { X: out, n: total, first, counts, spreadCounts };
};

/** Per row, the mean of its value rows and the spread (std) of its spread rows (or value rows). */
const fold = (e: Expansion, values: Float64Array) => {
  const n = e.first.length;
  const mean = new Float64Array(n);
  const spread = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    const a = e.first[r]!;
    const ca = e.counts[r]!;
    let s = 0;
    for (let j = 0; j < ca; j++) s += values[a + j]!;
    mean[r] = s / ca;
    const b = e.spreadCounts[r] ? a + ca : a;
    const cb = e.spreadCounts[r] || ca;
    if (cb < 2) continue;
    let m = 0;
    for (let j = 0; j < cb; j++) m += values[b + j]!;
    m /= cb;
    let v = 0;
    for (let j = 0; j < cb; j++) v += (values[b + j]! - m) ** 2;
    spread[r] = sqrt(v / cb);
  }
  return { mean, spread };
};

/** Per row, the mean over its value rows of K-wide probability rows. */
const foldProbabilities = (e: Expansion, p: Float64Array, classes: number) => {
  const n = e.first.length;
  const out = new Float64Array(n * classes);
  for (let r = 0; r < n; r++) {
    const a = e.first[r]!;
    const ca = e.counts[r]!;
    for (let j = 0; j < ca; j++)
      for (let k = 0; k < classes; k++) out[r * classes + k]! += p[(a + j) * classes + k]! / ca;
  }
  return out;
};

/**
 * Regression: each row's scale σ = √(difficulty² + spread²), its difficulty the mean error of the
 * model on the dev rows nearest on its known inputs (1 without dev rows).
 */
const scales = (
  layout: ColumnLayout,
  source: DifficultySource | null,
  X: Float64Array,
  n: number,
  status: Uint8Array | null,
  spread: Float64Array | null,
) => {
  const out = new Float64Array(n);
  const keys = source ? keysOf(layout, X, n) : null;
  let allKnown: Uint8Array | null = null;
  for (let r = 0; r < n; r++) {
    let difficulty = 1;
    if (source) {
      const { model } = source;
      const k = model.neighbours;
      const known = status
        ? knownColumns(layout.columns, status, r)
        : (allKnown ??= knownColumns(layout.columns, null, 0));
      let e = DIFFICULTY_PRIOR * model.meanError;
      for (const i of nearest(layout, keys!, r, known, source, k)) e += model.errors[i]!;
      difficulty = Math.max(e / (k + DIFFICULTY_PRIOR), 1e-12 * (model.meanError + 1e-300));
    }
    const s = spread ? spread[r]! : 0;
    // The mean absolute error of a normal error is 0.8 of its standard deviation.
    const dev = 1.25 * difficulty;
    out[r] = sqrt(dev * dev + s * s) || 1e-300;
  }
  return out;
};

/** Everything a predictor needs of a partial model, built once per model. */
export const makePartial = (p: PartialModel, encodings: readonly ColumnEncoding[], d: number) => {
  const layout: ColumnLayout = {
    columns: p.columns,
    encodings,
    d,
    weights: Float64Array.from(p.columns, (c) => c.weight),
    ranked: Uint8Array.from(p.columns, (c) => (c.compare === 'rank' ? 1 : 0)),
  };
  const reference = fromJson(p.reference);
  const R = reference.length / Math.max(d, 1);
  const fill: FillSource = {
    ...neighbourhood(layout.columns.length, keysOf(layout, reference, R), R),
    reference,
    neighbours: p.neighbours,
  };
  const difficultyX = p.difficulty ? fromJson(p.difficulty.features) : null;
  const difficulty: DifficultySource | null =
    p.difficulty && difficultyX
      ? {
          ...neighbourhood(
            layout.columns.length,
            keysOf(layout, difficultyX, p.difficulty.errors.length),
            p.difficulty.errors.length,
          ),
          model: p.difficulty,
        }
      : null;
  return {
    statusOf: (X: Float64Array, n: number, raw?: RawGiven) => statusOf(layout, X, n, raw),
    expand: (X: Float64Array, n: number, status: Uint8Array) => expand(layout, fill, X, n, status),
    fold,
    foldProbabilities,
    scales: (X: Float64Array, n: number, status: Uint8Array | null, spread: Float64Array | null) =>
      scales(layout, difficulty, X, n, status, spread),
    columns: p.columns.length,
    neighbours: p.neighbours,
  };
};

/** Python's json.dumps of a list of strings. */
const pythonList = (names: readonly string[]) => `[${names.map((n) => JSON.stringify(n)).join(', ')}]`;

/** What `<target>_explain` adds for a row whose inputs were not all known. */
const partialExplain = (
  missing: readonly string[],
  unseen: readonly string[],
  outOfRange: readonly string[],
  given: readonly string[],
  neighbours: number,
) =>
  `, "missing_inputs": ${pythonList(missing)}, "unseen_inputs": ${pythonList(unseen)}, "out_of_range_inputs": ${pythonList(outOfRange)}, "filled_with": ${JSON.stringify(
    missing.length + unseen.length
      ? `the mean prediction over the ${neighbours} training rows nearest on ${given.length ? given.join(', ') : 'nothing given'}, each filling the missing and unseen inputs`
      : 'the inputs as given',
  )}, "interval": ${JSON.stringify(
    outOfRange.length
      ? 'widened by the spread of the predictions over those rows, as if the out-of-range inputs were unknown'
      : missing.length + unseen.length
        ? 'widened by the spread of the predictions over those rows'
        : 'the model\u2019s own',
  )}`;

/** How DESCRIBE says a model treats missing inputs. */
export const PARTIAL_INPUTS_DESCRIPTION = `a missing input, or a category the model did not learn, is filled from each of the ${NEIGHBOURS} training rows nearest on the inputs given and their predictions averaged; a number's interval widens with the spread of those predictions, and for inputs outside the training range; <target>_explain names them`;

/** The explanation with what was missing, unseen or out of range, for a row that had any. */
export const explainPartial = (
  p: PartialModel | undefined,
  explain: string,
  status: Uint8Array | null | undefined,
  r: number,
) => {
  if (!status || !p) return explain;
  const C = p.columns.length;
  const missing: string[] = [];
  const unseen: string[] = [];
  const outOfRange: string[] = [];
  const given: string[] = [];
  for (let c = 0; c < C; c++) {
    const s = status[r * C + c]!;
    const name = p.columns[c]!.column;
    if (s === MISSING) missing.push(name);
    else if (s === UNSEEN) unseen.push(name);
    else if (s === OUT_OF_RANGE) outOfRange.push(name);
    else if (s === KNOWN && p.columns[c]!.compare !== 'none') given.push(name);
  }
  if (!missing.length && !unseen.length && !outOfRange.length) return explain;
  return `${explain.slice(0, -1)}${partialExplain(missing, unseen, outOfRange, given, p.neighbours)}}`;
};
