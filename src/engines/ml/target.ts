import { distinctNumbers, inferColumnType, numbersOf } from './columnTypes';
import type { DType } from './dataset';
import { TrainingError } from './trainingError';
import type { ColumnValues } from './table';

/** What `USING target_type = …` asks for: predict classes, or predict a number. */
export type TargetType = 'categorical' | 'numeric';

export type TargetPlan = {
  task: 'regression' | 'classification';
  /** The target's type as DESCRIBE shows it (integer targets with few values become binary/categorical). */
  dtype: DType;
  targetType: TargetType;
  source: 'inferred' | 'option';
};

class TargetTypeError extends Error {}

/**
 * Numbers with fewer than this many distinct values are classes, as in Lightwood's type inference
 * (`nr_distinct_vals < 10`), provided every class has on average at least `MIN_ROWS_PER_CLASS` rows:
 * 9 distinct integers in 30 rows are more likely a small numeric sample than 9 classes.
 */
const MAX_NUMERIC_CLASSES = 9;
const MIN_ROWS_PER_CLASS = 20;

/**
 * Decides regression or classification for a target column: an explicit `target_type` wins;
 * otherwise numbers with two distinct values, or integers with a few distinct values relative to
 * the rows, are classes, and any non-numeric column (booleans, strings) is classes too.
 */
export const planTarget = (values: ColumnValues, option?: TargetType): TargetPlan | null => {
  const dtype = inferColumnType(values);
  if (dtype === null) return null;
  const numeric = dtype === 'integer' || dtype === 'float';
  const numbers = numeric || dtype === 'binary' ? numbersOf(values) : null;
  // A two-valued column of numbers ("1"/"2", 0/1) reads as numbers, not as binary strings.
  const readsAsNumbers =
    numbers !== null && numbers.reduce((c, v) => c + (v === v ? 1 : 0), 0) >= presentCount(values) * 0.98;
  switch (option) {
    case 'numeric': {
      if (!readsAsNumbers)
        throw new TargetTypeError(
          'target_type = numeric, but the target column does not hold numbers: use target_type = categorical',
        );
      const integers = numbers!.every((v) => v !== v || Number.isInteger(v));
      return {
        task: 'regression',
        dtype: integers ? 'integer' : 'float',
        targetType: 'numeric',
        source: 'option',
      };
    }
    case 'categorical': {
      const classes = distinctKeys(values);
      return {
        task: 'classification',
        dtype: classes <= 2 ? 'binary' : 'categorical',
        targetType: 'categorical',
        source: 'option',
      };
    }
    case undefined:
      break;
    default: {
      const _exhaustive: never = option;
      return _exhaustive;
    }
  }
  if (!numeric) return { task: 'classification', dtype, targetType: 'categorical', source: 'inferred' };
  const distinct = distinctNumbers(numbers!, MAX_NUMERIC_CLASSES);
  const rows = presentCount(values);
  if (
    distinct <= 2 ||
    (dtype === 'integer' && distinct <= MAX_NUMERIC_CLASSES && rows >= distinct * MIN_ROWS_PER_CLASS)
  )
    return {
      task: 'classification',
      dtype: distinct <= 2 ? 'binary' : 'categorical',
      targetType: 'categorical',
      source: 'inferred',
    };
  return { task: 'regression', dtype, targetType: 'numeric', source: 'inferred' };
};

const isPresent = (v: unknown) =>
  v !== null &&
  v !== undefined &&
  !(typeof v === 'string' && v.trim() === '') &&
  !(typeof v === 'number' && v !== v);

const presentCount = (values: ColumnValues) => {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (isPresent(values[i])) n++;
  return n;
};

const distinctKeys = (values: ColumnValues) => {
  const seen = new Set<string>();
  for (let i = 0; i < values.length; i++) if (isPresent(values[i])) seen.add(String(values[i]).trim());
  return seen.size;
};

/** The plan for a training's target, with a training error for the user when it cannot be one. */
export const planTargetOrFail = (values: ColumnValues, target: string, option: TargetType | undefined) => {
  try {
    const plan = planTarget(values, option);
    if (!plan) throw new TrainingError(`The target column ${target} has no values`);
    return plan;
  } catch (error) {
    if (error instanceof TargetTypeError) throw new TrainingError(error.message);
    throw error;
  }
};
