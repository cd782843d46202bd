/**
 * Time-series models, as MindsDB/Lightwood build them from ORDER BY, GROUP BY, WINDOW and HORIZON:
 * each group's rows are ordered, and for every anchor row the last `window` target values become
 * lag features; one model per horizon step predicts the value `step` rows ahead. Features and
 * target are relative to the anchor's value and scaled by the window's mean magnitude, so one
 * model serves groups of different sizes and trees need not extrapolate a trend. Each step is
 * calibrated on the latest rows of every group (inductive conformal, normalised by that scale): a
 * forecast gives step h the quantile of step h's own held-out errors at the asked level (no
 * Bonferroni correction, unlike Lightwood's TSAbsErrorErrFunc, so each step is covered at that
 * level), steps pooled where a later one would be narrower (`horizonHalfWidths`).
 */
import {
  boundedValue,
  clampConfidence,
  conformalHalfWidth,
  hasValue,
  LEVELS,
  predictionColumns,
  pythonJson,
  type PredictOptions,
  type Predictor,
} from './answers';
import type { ForecastArtifact, ForecastStep, Mixer } from './artifact';
import { MAX_FIT_ROWS, prepareBoosting, sampleRows, trainBoosted } from './boost';
import { thinScores } from './calibrate';
import { inferColumnType, numbersOf } from './columnTypes';
import { toNumber, type DType, type Row } from './dataset';
import { cellKey } from './encode';
import { trainLinear } from './linear';
import { makeScorer, rowMajor, type Scorer } from './mixers';
import { r2 } from './metrics';
import type { ParsedTrainOptions } from './options';
import { TrainingError } from './trainingError';
import type { ProgressReporter } from './progress';
import { planTargetOrFail } from './target';
import { isNumericColumn, rowCount, type ColumnValues, type ColumnarData } from './table';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const TAU = 2 * Math.PI;
/**
 * Cycles of the target time, as points on circles (no false order between December and January).
 * A cycle is used only when the history covers it at least twice: over a partial year, a yearly
 * cycle would only mimic the trend and mislead forecasts into the months never seen.
 */
type CalendarCycle = 'weekday' | 'year' | 'hour';

const calendarOf = (kind: 'date' | 'number', interval: number, span: number): CalendarCycle[] => {
  if (kind !== 'date') return [];
  const cycles: CalendarCycle[] = [];
  if (interval < DAY_MS && span >= 2 * DAY_MS) cycles.push('hour');
  if (interval <= DAY_MS && span >= 14 * DAY_MS) cycles.push('weekday');
  if (interval <= 31 * DAY_MS && span >= 2 * 365 * DAY_MS) cycles.push('year');
  return cycles;
};

/** How order values become numbers (epoch milliseconds for dates). */
const readTime = (kind: 'date' | 'number', v: unknown): number => {
  if (kind === 'number') return toNumber(v);
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string' && v.trim() !== '') return Date.parse(v);
  return NaN;
};

const orderKindOf = (values: ColumnValues, orderBy: string) => {
  if (!isNumericColumn(values)) {
    let dates = 0;
    let present = 0;
    let dateOnly = true;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === null || v === undefined) continue;
      present++;
      if (v instanceof Date) {
        dates++;
        dateOnly = false;
      } else if (typeof v === 'string' && !DATE_ONLY.test(v.trim())) dateOnly = false;
    }
    if (present > 0 && dates === present) return { kind: 'date' as const, dtype: 'date' as DType, dateOnly };
    const dtype = inferColumnType(values);
    if (dtype === 'date') return { kind: 'date' as const, dtype, dateOnly };
    if (dtype === 'integer' || dtype === 'float' || dtype === 'binary')
      return { kind: 'number' as const, dtype, dateOnly: false };
  } else return { kind: 'number' as const, dtype: inferColumnType(values) ?? 'float', dateOnly: false };
  throw new TrainingError(`The ORDER BY column ${orderBy} must hold numbers or dates`);
};

const groupKeyOf = (values: readonly unknown[]) => values.map((v) => cellKey(v) ?? '\u0000').join('\u0001');

/** One group's rows in time order: their indices, times and target values. */
type Series = { groupValues: unknown[]; rows: number[]; t: Float64Array; y: Float64Array };

/**
 * Groups rows and orders each group by time (ties by position). Rows without a readable time are
 * left out; rows without a target value are kept (NaN) only when `keepMissing` is set.
 */
const buildSeries = (
  n: number,
  time: (i: number) => number,
  value: (i: number) => number,
  groupValues: (i: number) => unknown[],
  keepMissing: boolean,
): Series[] => {
  const groups = new Map<string, { values: unknown[]; rows: number[] }>();
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(time(i))) continue;
    if (!keepMissing && Number.isNaN(value(i))) continue;
    const values = groupValues(i);
    const key = groupKeyOf(values);
    const g = groups.get(key);
    if (g) g.rows.push(i);
    else groups.set(key, { values, rows: [i] });
  }
  return [...groups.values()].map((g) => {
    const times = g.rows.map(time);
    const order = g.rows.map((_, k) => k).sort((a, b) => times[a]! - times[b]! || a - b);
    const rows = order.map((k) => g.rows[k]!);
    return {
      groupValues: g.values,
      rows,
      t: Float64Array.from(order, (k) => times[k]!),
      y: Float64Array.from(rows, value),
    };
  });
};

/**
 * Writes the features of the window ending at position `j` of `y` (lags relative to y[j], the
 * window's mean and slope, then the calendar of the target time) into `out` at `offset`.
 */
const windowFeatures = (
  y: ArrayLike<number>,
  j: number,
  window: number,
  calendar: readonly CalendarCycle[],
  targetTime: number,
  out: Float64Array,
  offset: number,
) => {
  let magnitude = 0;
  let count = 0;
  let sum = 0;
  for (let l = 0; l < window && j - l >= 0; l++) {
    magnitude += Math.abs(y[j - l]!);
    sum += y[j - l]!;
    count++;
  }
  const ref = y[j]!;
  const scale = magnitude / count > 0 ? magnitude / count : 1;
  let at = offset;
  for (let l = 1; l < window; l++) out[at++] = j - l >= 0 ? (y[j - l]! - ref) / scale : NaN;
  out[at++] = (sum / count - y[j]!) / scale;
  // Least-squares slope of the window against its positions, per step.
  let slope = 0;
  if (count >= 2) {
    const meanX = -(count - 1) / 2;
    const meanY = sum / count;
    let sxy = 0;
    let sxx = 0;
    for (let l = 0; l < count; l++) {
      sxy += (-l - meanX) * (y[j - l]! - meanY);
      sxx += (-l - meanX) ** 2;
    }
    slope = sxy / sxx / scale;
  }
  out[at++] = slope;
  for (const cycle of calendar) {
    let phase: number;
    switch (cycle) {
      case 'weekday':
        phase = new Date(targetTime).getUTCDay() / 7;
        break;
      case 'year': {
        const start = Date.UTC(new Date(targetTime).getUTCFullYear(), 0, 1);
        phase = (targetTime - start) / (365.25 * DAY_MS);
        break;
      }
      case 'hour':
        phase = (((targetTime % DAY_MS) + DAY_MS) % DAY_MS) / DAY_MS;
        break;
    }
    out[at++] = Math.sin(TAU * phase);
    out[at++] = Math.cos(TAU * phase);
  }
  return { ref, scale };
};

const featureNamesOf = (window: number, calendar: readonly CalendarCycle[]) => [
  ...Array.from({ length: window - 1 }, (_, l) => `lag_${l + 1}`),
  'window_mean',
  'window_slope',
  ...calendar.flatMap((c) => [`target_${c}_sin`, `target_${c}_cos`]),
];

const median = (values: number[]) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** The option's columns exist, the target neither orders nor groups, and the target is a number. */
const checkForecastColumns = (
  table: ColumnarData,
  target: string,
  orderBy: string,
  groupBy: readonly string[],
  option: ParsedTrainOptions['targetType'],
) => {
  if (rowCount(table) === 0) throw new TrainingError('The training query returned no rows');
  for (const name of [target, orderBy, ...groupBy])
    if (!table.columns.includes(name))
      throw new TrainingError(
        `The column ${name} is not among the query's columns: ${table.columns.join(', ')}`,
      );
  if (orderBy === target || groupBy.includes(target))
    throw new TrainingError(`The target ${target} cannot also order or group the rows`);
  if (option === 'categorical')
    throw new TrainingError(
      'Time-series models forecast numbers: target_type = categorical is not supported',
    );
};

/** The median positive gap between consecutive times (of the first 100,000 gaps), at least 1. */
const typicalInterval = (series: readonly Series[]) => {
  const gaps: number[] = [];
  for (const g of series)
    for (let j = 1; j < g.t.length && gaps.length < 100_000; j++) gaps.push(g.t[j]! - g.t[j - 1]!);
  return median(gaps.filter((x) => x > 0)) || 1;
};

/** From the first time of any group to the last of any. */
const timeSpan = (series: readonly Series[]) => {
  let first = Infinity;
  let last = -Infinity;
  for (const g of series) {
    first = Math.min(first, g.t[0]!);
    last = Math.max(last, g.t[g.t.length - 1]!);
  }
  return last - first;
};

/** The target's standard deviation over every used row, and whether it is never negative. */
const targetSpread = (series: readonly Series[], usedRows: number) => {
  let variance = 0;
  let mean = 0;
  let positive = true;
  for (const g of series)
    for (const v of g.y) {
      mean += v;
      if (v < 0) positive = false;
    }
  mean /= usedRows;
  for (const g of series) for (const v of g.y) variance += (v - mean) ** 2;
  return { targetStd: Math.sqrt(variance / usedRows), positive };
};

/**
 * Samples for horizon step `s`: every anchor with a value `s` rows later, split by the target's
 * position in time (each group's last tenth calibrates, the tenth before it is dev). Typed arrays,
 * no objects: features column by column, the target relative to the anchor and scaled.
 */
const stepSamples = (
  series: readonly Series[],
  s: number,
  window: number,
  calendar: readonly CalendarCycle[],
  d: number,
) => {
  let n = 0;
  for (const g of series) n += Math.max(0, g.y.length - s);
  const anchorSeries = new Int32Array(n);
  const anchorAt = new Int32Array(n);
  const part = new Uint8Array(n);
  let k = 0;
  series.forEach((g, gi) => {
    const m = g.y.length;
    const tail = m >= 10 ? Math.max(1, Math.floor(m * 0.1)) : 0;
    for (let j = 0; j + s < m; j++, k++) {
      const i = j + s;
      anchorSeries[k] = gi;
      anchorAt[k] = j;
      part[k] = tail && i >= m - tail ? 2 : tail && i >= m - 2 * tail ? 1 : 0;
    }
  });
  const features = Array.from({ length: d }, () => new Float64Array(n));
  const row = new Float64Array(d);
  const yNorm = new Float64Array(n);
  const ref = new Float64Array(n);
  const scale = new Float64Array(n);
  const truth = new Float64Array(n);
  const counts = [0, 0, 0];
  for (let q = 0; q < n; q++) {
    const g = series[anchorSeries[q]!]!;
    const j = anchorAt[q]!;
    const w = windowFeatures(g.y, j, window, calendar, g.t[j + s]!, row, 0);
    for (let f = 0; f < d; f++) features[f]![q] = row[f]!;
    ref[q] = w.ref;
    scale[q] = w.scale;
    truth[q] = g.y[j + s]!;
    yNorm[q] = (truth[q]! - w.ref) / w.scale;
    counts[part[q]!]!++;
  }
  const pick = (which: number) => {
    const out = new Int32Array(counts[which]!);
    let at = 0;
    for (let q = 0; q < n; q++) if (part[q] === which) out[at++] = q;
    return out;
  };
  const train = pick(0);
  const dev = pick(1);
  const cal = pick(2);
  if (train.length < 5 || dev.length === 0 || cal.length === 0)
    throw new TrainingError(
      `Too little history to forecast ${s} step(s) ahead: every group needs at least 10 rows, and more than the horizon`,
    );
  return { features, yNorm, ref, scale, truth, train, dev, cal };
};

/** Step `s`'s model: the best on dev of last value, linear and boosted (each scored into `candidates`), calibrated. */
const trainStep = (
  samples: ReturnType<typeof stepSamples>,
  s: number,
  d: number,
  seed: number,
  maxRounds: number,
  candidates: Record<string, number>,
): ForecastStep => {
  const { features, yNorm, ref, scale, truth, train, dev, cal } = samples;
  /** Predictions in the target's units for samples `idx`. */
  const inUnits = (mixer: Mixer, idx: Int32Array) => {
    const out = makeScorer(mixer, 0)(rowMajor(features, idx), idx.length, d);
    return Array.from(idx, (q, r) => ref[q]! + scale[q]! * out[r]!);
  };
  const devTruth = Array.from(dev, (q) => truth[q]!);
  let best: { mixer: Mixer; score: number } | null = null;
  const consider = (name: string, mixer: Mixer) => {
    const score = r2(devTruth, inUnits(mixer, dev));
    candidates[`step${s}:${name}`] = score;
    if (!best || score > best.score + 1e-12) best = { mixer, score };
  };
  consider('last_value', { kind: 'mean', value: 0 });
  consider('linear', trainLinear(features, yNorm, sampleRows(train, MAX_FIT_ROWS, seed + s)));
  const input = prepareBoosting(features, yNorm, null, train, dev, { kind: 'l2' }, seed + s);
  consider('gbdt', trainBoosted(input, { maxRounds, seed: seed + s, minLeaf: 10 }));
  const chosen = best!;
  const calPredicted = inUnits(chosen.mixer, cal);
  const calTruth = Array.from(cal, (q) => truth[q]!);
  return {
    step: s,
    mixer: chosen.mixer,
    scores: thinScores(
      Array.from(cal, (q, r) => Math.abs(truth[q]! - calPredicted[r]!) / scale[q]!).sort((a, b) => a - b),
    ),
    r2: r2(calTruth, calPredicted),
  };
};

/** Lightwood's automatic confidence, for the step-1 interval at the typical window scale. */
const automaticConfidence = (steps: readonly ForecastStep[], stepOneScales: number[], targetStd: number) => {
  const typicalScale = median(stepOneScales);
  for (const c of LEVELS)
    if (2 * conformalHalfWidth(steps[0]!.scores, c) * typicalScale <= targetStd) return c;
  return 0.99;
};

/** Each group's rows of the table in time order (rows without a time or a target left out). */
const tableSeries = (
  table: ColumnarData,
  target: string,
  orderKind: 'date' | 'number',
  orderBy: string,
  groupBy: readonly string[],
) => {
  const valuesOf = (name: string) => table.data[table.columns.indexOf(name)]!;
  const orderValues = valuesOf(orderBy);
  const times = Float64Array.from({ length: rowCount(table) }, (_, i) => readTime(orderKind, orderValues[i]));
  const y = numbersOf(valuesOf(target));
  const groupColumns = groupBy.map(valuesOf);
  return buildSeries(
    rowCount(table),
    (i) => times[i]!,
    (i) => y[i]!,
    (i) => groupColumns.map((c) => c[i]),
    false,
  );
};

/** Trains the forecaster: see the file's comment. */
export const trainForecaster = (
  table: ColumnarData,
  target: string,
  o: ParsedTrainOptions,
  report: ProgressReporter,
): ForecastArtifact => {
  const seed = o.seed ?? 42;
  const window = o.window ?? 10;
  const horizon = o.horizon ?? 1;
  const orderBy = o.orderBy!;
  const groupBy = o.groupBy ?? [];
  const option = o.target_type ?? o.targetType;
  checkForecastColumns(table, target, orderBy, groupBy, option);
  const valuesOf = (name: string) => table.data[table.columns.indexOf(name)]!;
  const plan = planTargetOrFail(valuesOf(target), target, 'numeric');
  const order = orderKindOf(valuesOf(orderBy), orderBy);
  const series = tableSeries(table, target, order.kind, orderBy, groupBy);
  report('encoding', 0.3);
  const usedRows = series.reduce((s, g) => s + g.rows.length, 0);
  if (usedRows < 10)
    throw new TrainingError(`Only ${usedRows} rows have a time and a ${target}: at least 10 are needed`);

  const interval = typicalInterval(series);
  const calendar = calendarOf(order.kind, interval, timeSpan(series));
  const names = featureNamesOf(window, calendar);
  const d = names.length;
  const { targetStd, positive } = targetSpread(series, usedRows);
  report('encoding', 1);

  const steps: ForecastStep[] = [];
  const candidates: Record<string, number> = {};
  let firstSplit = { train: 0, dev: 0, calibration: 0 };
  let stepOneScales: number[] = [];
  for (let s = 1; s <= horizon; s++) {
    const samples = stepSamples(series, s, window, calendar, d);
    if (s === 1) {
      const { train, dev, cal, scale } = samples;
      firstSplit = { train: train.length, dev: dev.length, calibration: cal.length };
      stepOneScales = Array.from(cal, (q) => scale[q]!);
    }
    steps.push(trainStep(samples, s, d, seed, o.maxRounds ?? 300, candidates));
    report('training', s / horizon);
  }
  const confidence = automaticConfidence(steps, stepOneScales, targetStd);
  report('calibrating', 1);

  return {
    schemaVersion: 2,
    engine: 'mindledger-timeseries',
    target,
    targetDtype: plan.dtype,
    targetType: 'numeric',
    targetTypeSource: option ? 'option' : 'inferred',
    task: 'forecast',
    columns: [
      { name: orderBy, dtype: order.dtype },
      ...groupBy.map((name) => ({
        name,
        dtype: inferColumnType(valuesOf(name)) ?? ('categorical' as DType),
      })),
    ],
    timeseries: {
      orderBy,
      orderKind: order.kind,
      dateOnly: order.dateOnly,
      groupBy,
      window,
      horizon,
      interval,
      calendar,
      features: names,
    },
    steps,
    calibration: {
      kind: 'forecast',
      targetStd,
      positiveDomain: positive,
      isInteger: plan.dtype === 'integer',
      confidence,
    },
    importance: [],
    training: {
      rows: usedRows,
      seed,
      split: firstSplit,
      candidates,
      accuracy: steps.reduce((a, st) => a + st.r2, 0) / steps.length,
      metric: 'r2',
    },
  };
};

const formatTime = (a: ForecastArtifact, t: number): string | number => {
  if (a.timeseries.orderKind === 'number') return t;
  const iso = new Date(t).toISOString();
  return a.timeseries.dateOnly ? iso.slice(0, 10) : iso;
};

const seriesOf = (a: ForecastArtifact, rows: readonly Row[], keepMissing: boolean) =>
  buildSeries(
    rows.length,
    (i) => readTime(a.timeseries.orderKind, rows[i]![a.timeseries.orderBy]),
    (i) => toNumber(rows[i]![a.target]),
    (i) => a.timeseries.groupBy.map((c) => rows[i]![c]),
    keepMissing,
  );

/** Two ascending arrays as one. */
const mergeSorted = (a: readonly number[], b: readonly number[]) => {
  const out = new Array<number>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
};

/**
 * The normalised half-width of every horizon step's interval at level `c`, non-decreasing in the
 * step: each step's conformal quantile of its own held-out errors, and where a later step's would
 * be narrower than an earlier one's, the steps in between are pooled (their scores merged, one
 * quantile for all), as isotonic regression pools adjacent violators. Each width stays a split-
 * conformal quantile of held-out errors at that level, so each step keeps its coverage.
 */
const horizonHalfWidths = (steps: readonly { scores: readonly number[] }[], c: number) => {
  const blocks: { scores: readonly number[]; width: number; count: number }[] = [];
  for (const step of steps) {
    let block = { scores: step.scores, width: conformalHalfWidth(step.scores, c), count: 1 };
    while (blocks.length > 0 && blocks[blocks.length - 1]!.width > block.width) {
      const previous = blocks.pop()!;
      const scores = mergeSorted(previous.scores, block.scores);
      block = { scores, width: conformalHalfWidth(scores, c), count: previous.count + block.count };
    }
    blocks.push(block);
  }
  return blocks.flatMap((b) => Array.from({ length: b.count }, () => b.width));
};

/** What an answer row says of its target: the prediction and its interval, the truth and the verdict. */
type ForecastCells = {
  value: number | null;
  lower: number | null;
  upper: number | null;
  truth: number | null;
  anomaly: boolean | null;
};

/** One answer row: `base`, the target's cells (no explanation when `skipExplain`), and what `from` carries over. */
const forecastAnswer = (
  target: string,
  base: Row,
  from: Row,
  { value, lower, upper, truth, anomaly }: ForecastCells,
  confidence: number,
  skipExplain: boolean,
  horizonStep?: number,
): Row => ({
  ...base,
  [target]: value,
  [`${target}_original`]: truth,
  [`${target}_confidence`]: value === null ? null : confidence,
  [`${target}_explain`]:
    skipExplain || value === null
      ? null
      : pythonJson({
          predicted_value: value,
          confidence,
          anomaly,
          truth,
          confidence_lower_bound: lower,
          confidence_upper_bound: upper,
          ...(horizonStep === undefined ? {} : { horizon_step: horizonStep }),
        }),
  [`${target}_anomaly`]: anomaly,
  [`${target}_min`]: lower,
  [`${target}_max`]: upper,
  // The row ids and queries of the row answered (a forecast: the group's last history row).
  select_data_query: from.select_data_query ?? null,
  when_data: from.when_data ?? null,
  __mindsdb_row_id: from.__mindsdb_row_id ?? null,
});

/** What a forecaster's answers share, built once per model. */
type Forecasting = {
  artifact: ForecastArtifact;
  inputColumns: string[];
  /** One step's prediction and interval (normalised half-width `width`) after position j of y, for `when`. */
  stepAhead: (
    y: ArrayLike<number>,
    j: number,
    step: number,
    when: number,
    width: number,
  ) => { raw: number; value: number; lower: number; upper: number };
  levelOf: (options: PredictOptions) => number;
  /** Normalised half-widths per horizon step at a level. */
  widthsAt: (level: number) => number[];
};

const skipsExplain = (target: string, options: PredictOptions) =>
  options.wanted !== undefined && !options.wanted.has(`${target}_explain`);

/** A row's input columns (absent ones null). */
const inputsOf = (inputColumns: readonly string[], r: Row) => {
  const base: Row = {};
  for (const c of inputColumns) base[c] = r[c] ?? null;
  return base;
};

/**
 * Every history row predicted from the rows before it in its group (one step ahead). With a full
 * window behind it, a row whose given value falls outside the interval is an anomaly, and the
 * windows of later rows see its value clipped to that interval, so one outlier does not make its
 * neighbours look odd. Rows with a shorter history get a prediction but no verdict.
 */
const predictHistory = (f: Forecasting, rows: readonly Row[], options: PredictOptions) => {
  const { artifact, inputColumns } = f;
  const { target, timeseries: ts } = artifact;
  const level = f.levelOf(options);
  const oneStep = conformalHalfWidth(artifact.steps[0]!.scores, level);
  const skipExplain = skipsExplain(target, options);
  const answers: Row[] = rows.map((r) => {
    const truth = hasValue(r[target]) ? toNumber(r[target]) : NaN;
    const cells = {
      value: null,
      lower: null,
      upper: null,
      truth: Number.isNaN(truth) ? null : truth,
      anomaly: null,
    };
    return forecastAnswer(target, inputsOf(inputColumns, r), r, cells, level, skipExplain);
  });
  for (const g of seriesOf(artifact, rows, true)) {
    const clean = Float64Array.from(g.y);
    for (let j = 1; j < g.rows.length; j++) {
      const p = f.stepAhead(clean, j - 1, 1, g.t[j]!, oneStep);
      const truth = g.y[j]!;
      const known = !Number.isNaN(truth);
      const judged = known && j >= ts.window;
      const anomaly = judged ? truth < p.lower || truth > p.upper : null;
      if (!known) clean[j] = p.raw;
      else if (anomaly) clean[j] = Math.min(p.upper, Math.max(p.lower, truth));
      const row = rows[g.rows[j]!]!;
      const cells = { ...p, truth: known ? truth : null, anomaly };
      answers[g.rows[j]!] = forecastAnswer(
        target,
        inputsOf(inputColumns, row),
        row,
        cells,
        level,
        skipExplain,
      );
    }
  }
  return answers;
};

/**
 * The next `horizon` steps of every group after its last history row, step h's interval at the
 * asked level on its own (`horizonHalfWidths`: no wider for h than for h + 1); each carries that
 * row's `__mindsdb_row_id`, `select_data_query` and `when_data`, and its explanation the step.
 */
const forecastAhead = (f: Forecasting, history: readonly Row[], options: PredictOptions) => {
  const { artifact } = f;
  const { target, timeseries: ts } = artifact;
  const level = f.levelOf(options);
  const widths = f.widthsAt(level);
  const skipExplain = skipsExplain(target, options);
  const out: Row[] = [];
  for (const g of seriesOf(artifact, history, false)) {
    const j = g.y.length - 1;
    if (j < 0) continue;
    for (let s = 1; s <= ts.horizon; s++) {
      const when = g.t[j]! + s * ts.interval;
      const p = f.stepAhead(g.y, j, s, when, widths[s - 1]!);
      const base: Row = { [ts.orderBy]: formatTime(artifact, when) };
      ts.groupBy.forEach((c, k) => (base[c] = g.groupValues[k] ?? null));
      // The row ids (and queries) of the group's last history row: callers find the anchor.
      const cells = { ...p, truth: null, anomaly: null };
      out.push(forecastAnswer(target, base, history[g.rows[j]!]!, cells, level, skipExplain, s));
    }
  }
  return out;
};

/** Predictor of a forecaster: `predict` judges history rows one step ahead, `forecast` looks forward. */
export const forecastPredictor = (artifact: ForecastArtifact): Predictor => {
  const { target, timeseries: ts, calibration: cal } = artifact;
  const d = ts.features.length;
  const scorers: Scorer[] = artifact.steps.map((s) => makeScorer(s.mixer, 0));
  const row = new Float64Array(d);
  // A handful of levels are ever asked: their widths are kept.
  const widthsByLevel = new Map<number, number[]>();
  const f: Forecasting = {
    artifact,
    inputColumns: artifact.columns.map((c) => c.name),
    stepAhead: (y, j, step, when, width) => {
      const w = windowFeatures(y, j, ts.window, ts.calendar, when, row, 0);
      const out = scorers[step - 1]!(row, 1, d)[0]!;
      const raw = w.ref + w.scale * out;
      return { raw, ...boundedValue(raw, w.scale * width, cal) };
    },
    levelOf: (options) =>
      options.fixed_confidence !== undefined ? clampConfidence(options.fixed_confidence) : cal.confidence,
    widthsAt: (level) => {
      let widths = widthsByLevel.get(level);
      if (!widths) {
        widths = horizonHalfWidths(artifact.steps, level);
        widthsByLevel.set(level, widths);
      }
      return widths;
    },
  };
  return {
    predict: (rows: readonly Row[], options: PredictOptions = {}) => predictHistory(f, rows, options),
    forecast: (history: readonly Row[], options: PredictOptions = {}) => forecastAhead(f, history, options),
    outputColumns: predictionColumns(f.inputColumns, target, true),
    artifact,
  };
};

/** The next `horizon` values of every group after the given history rows, with bounds. */
export const forecast = (artifact: ForecastArtifact, history: readonly Row[], options: PredictOptions = {}) =>
  forecastPredictor(artifact).forecast!(history, options);
