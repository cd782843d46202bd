import { ownEntry } from '../shared/ownEntry';
import { parseTrainOptions, TrainingError, type TrainOptions } from '../engines/ml/options';

/** MindsDB's `ORDER BY t [GROUP BY g, …] [WINDOW n] [HORIZON h]` of a CREATE MODEL. */
export type TimeSeriesSettings = {
  readonly orderBy: string;
  readonly groupBy: readonly string[];
  readonly window: number | null;
  readonly horizon: number | null;
};

/**
 * The USING options the engine reads, by their SQL spelling (the grammar lower-cases keys, so
 * `maxRounds` arrives as `maxrounds`); every other option (engine, tag, join_learn_process, …) is
 * the service's, not the engine's.
 */
const ENGINE_OPTIONS: Record<string, keyof TrainOptions> = {
  seed: 'seed',
  target_type: 'target_type',
  targettype: 'target_type',
  max_rounds: 'maxRounds',
  maxrounds: 'maxRounds',
  class_balance: 'classBalance',
  classbalance: 'classBalance',
};

const CLAUSES: Record<string, string> = {
  orderBy: 'ORDER BY',
  groupBy: 'GROUP BY',
  window: 'WINDOW',
  horizon: 'HORIZON',
};
const USING_NAMES: Record<string, string> = { maxRounds: 'max_rounds', classBalance: 'class_balance' };

/** What the engine is asked for: the version's USING options it knows and its time-series clauses. */
export const trainOptionsOf = (
  options: Readonly<Record<string, unknown>>,
  timeseries: TimeSeriesSettings | null,
): TrainOptions => {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    const name = ownEntry(ENGINE_OPTIONS, key.toLowerCase());
    if (name && value !== null && value !== undefined) out[name] = value;
  }
  if (timeseries) {
    out.orderBy = timeseries.orderBy;
    if (timeseries.groupBy.length) out.groupBy = [...timeseries.groupBy];
    if (timeseries.window !== null) out.window = timeseries.window;
    if (timeseries.horizon !== null) out.horizon = timeseries.horizon;
  }
  return out as TrainOptions;
};

/**
 * Why the engine would refuse this definition before reading a row (a bad `target_type`, a
 * negative WINDOW, a target that also orders the rows…), or null: refused when the model is
 * defined (400 / a SQL error), rather than recorded later as a failed training.
 */
export const trainingDefinitionProblem = (
  target: string,
  options: Readonly<Record<string, unknown>>,
  timeseries: TimeSeriesSettings | null,
): string | null => {
  let parsed;
  try {
    parsed = parseTrainOptions(trainOptionsOf(options, timeseries));
  } catch (error) {
    if (error instanceof TrainingError)
      return error.message.replace(/^Invalid training option (\w+)/, (_all, key: string) => {
        const clause = ownEntry(CLAUSES, key);
        return clause ? `Invalid ${clause}` : `Invalid USING option ${ownEntry(USING_NAMES, key) ?? key}`;
      });
    throw error;
  }
  if (!timeseries) return null;
  const same = (a: string) => a.toLowerCase() === target.toLowerCase();
  if (same(timeseries.orderBy) || timeseries.groupBy.some(same))
    return `The target ${target} cannot also order or group the rows (ORDER BY / GROUP BY)`;
  if ((parsed.target_type ?? parsed.targetType) === 'categorical')
    return "Time-series models forecast numbers: target_type = 'categorical' is not supported with ORDER BY";
  return null;
};
