/**
 * Feature quantisation for histogram trees: each feature's values become at most 255 bins
 * (Uint8, bin 0 = missing), cut at quantiles of the training rows. A feature with few distinct
 * values gets one bin per value, so small integer and encoded categorical features lose nothing.
 */
export type BinnedFeatures = {
  /**
   * Row-major: row k's bin of feature f is bins[k * features + f]. Trees read a row's bins
   * together (histograms, partitions, walks), so one cache line serves all of them.
   */
  bins: Uint8Array;
  features: number;
  rows: number;
  /** Per feature, the cut points: value v falls in bin 1 + (number of cuts < v). */
  cuts: Float64Array[];
};

const MAX_BINS = 255;
/** Quantiles are read on at most this many training rows (LightGBM's bin_construct_sample_cnt). */
const QUANTILE_SAMPLE = 200_000;

/**
 * Cut points for one feature from the values of its quantile sample (missing ones skipped). The
 * sample is a set: which rows it holds decides the cuts, not the order they are read in.
 */
const cutsOf = (values: Float64Array, sampleRows: Int32Array, maxBins: number): Float64Array => {
  const m = sampleRows.length;
  const sorted = new Float64Array(m);
  for (let k = 0; k < m; k++) {
    const v = values[sampleRows[k]!]!;
    sorted[k] = v === v ? v : Infinity; // missing: sorted last, dropped below
  }
  sorted.sort();
  let present = m;
  while (present > 0 && sorted[present - 1] === Infinity) present--;
  if (present === 0) return new Float64Array(0);
  // Distinct values first: few of them → one bin each.
  const distinct: number[] = [];
  for (let i = 0; i < present && distinct.length <= maxBins; i++)
    if (i === 0 || sorted[i]! > sorted[i - 1]!) distinct.push(sorted[i]!);
  const cuts: number[] = [];
  if (distinct.length <= maxBins) cuts.push(...distinct);
  else
    for (let k = 1; k < maxBins; k++) {
      const v = sorted[Math.floor((k * present) / maxBins)]!;
      if (cuts.length === 0 || v > cuts[cuts.length - 1]!) cuts.push(v);
    }
  // The largest value needs no cut: every value above the last cut falls in the last bin.
  if (cuts.length && cuts[cuts.length - 1]! >= sorted[present - 1]!) cuts.pop();
  return Float64Array.from(cuts);
};

/** The training rows whose values set the cuts (LightGBM's bin_construct_sample_cnt), ascending. */
const quantileSample = (train: Int32Array) => {
  const m = Math.min(train.length, QUANTILE_SAMPLE);
  const step = train.length / m;
  const sample = new Int32Array(m);
  for (let k = 0; k < m; k++) sample[k] = train[Math.floor(k * step)]!;
  return sample.sort();
};

/**
 * `rows` in ascending source order: source[j] = rows[at[j]]. Reading a feature column in that order
 * walks it forwards; in the rows' own (shuffled) order each read would be a cache miss.
 */
const bySource = (rows: Int32Array) => {
  const n = rows.length;
  // One key per row, source-major: exact in a double while source × n < 2^53.
  const keys = new Float64Array(n);
  for (let k = 0; k < n; k++) keys[k] = rows[k]! * n + k;
  keys.sort();
  const source = new Int32Array(n);
  const at = new Int32Array(n);
  for (let j = 0; j < n; j++) {
    const key = keys[j]!;
    const k = key % n;
    at[j] = k;
    source[j] = (key - k) / n;
  }
  return { source, at };
};

/** Cuts padded with +Infinity to 256 entries, for a search of eight fixed steps. */
const padCuts = (cuts: Float64Array) => {
  const padded = new Float64Array(256).fill(Infinity);
  padded.set(cuts);
  return padded;
};

/**
 * Bins the rows `rows` (all rows when null) of every feature, with cuts learned on the `train`
 * rows: row k of the result is row rows[k] of the features, so a sample becomes a compact,
 * contiguous block that histogram passes walk without cache misses.
 */
export const binFeatures = (
  features: readonly Float64Array[],
  train: Int32Array,
  rows: Int32Array | null = null,
  maxBins = MAX_BINS,
): BinnedFeatures => {
  const limit = Math.min(maxBins, MAX_BINS);
  const d = features.length;
  const n = rows ? rows.length : (features[0]?.length ?? 0);
  const bins = new Uint8Array(n * d);
  const sample = quantileSample(train);
  const order = rows ? bySource(rows) : null;
  const cuts = features.map((values, f) => {
    const c = cutsOf(values, sample, limit);
    if (c.length === 0) return c;
    // The bin is 1 + (number of cuts < v): a binary search over the padded cuts whose steps are
    // selects rather than branches (a branchy search mispredicts about half its steps).
    const p = padCuts(c);
    for (let j = 0; j < n; j++) {
      const v = values[order ? order.source[j]! : j]!;
      if (v !== v) continue;
      let lo = 0;
      lo += p[lo + 127]! < v ? 128 : 0;
      lo += p[lo + 63]! < v ? 64 : 0;
      lo += p[lo + 31]! < v ? 32 : 0;
      lo += p[lo + 15]! < v ? 16 : 0;
      lo += p[lo + 7]! < v ? 8 : 0;
      lo += p[lo + 3]! < v ? 4 : 0;
      lo += p[lo + 1]! < v ? 2 : 0;
      lo += p[lo]! < v ? 1 : 0;
      bins[(order ? order.at[j]! : j) * d + f] = lo + 1;
    }
    return c;
  });
  return { bins, features: d, rows: n, cuts };
};
