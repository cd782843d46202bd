import { z } from 'zod';
import type { OnProgress } from './progress';
import { TrainingError } from './trainingError';

export { TrainingError };

const lower = (v: unknown) => (typeof v === 'string' ? v.trim().toLowerCase() : v);
const integer = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
    z.number().int().min(min).max(max),
  );
const columnList = z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string().min(1)).max(16));

/** Training options as they arrive from SQL `USING …` / the API: checked here, at the boundary. */
const trainOptionsSchema = z.object({
  seed: integer(0, 2 ** 32 - 1).optional(),
  maxRounds: integer(1, 10_000).optional(),
  /** Overrides the inferred task: classes, or a number. */
  target_type: z.preprocess(lower, z.enum(['categorical', 'numeric'])).optional(),
  targetType: z.preprocess(lower, z.enum(['categorical', 'numeric'])).optional(),
  /** 'balanced' (default): class weights in the gradients and a balanced decision; 'none': neither. */
  classBalance: z.preprocess(lower, z.enum(['balanced', 'none'])).optional(),
  /** Time series: the column that orders rows; with it, the model forecasts. */
  orderBy: z.string().min(1).optional(),
  groupBy: columnList.optional(),
  /** Rows of history each forecast reads (MindsDB's WINDOW). */
  window: integer(1, 1_000).optional(),
  /** Steps forecast ahead (MindsDB's HORIZON). */
  horizon: integer(1, 1_000).optional(),
});

export type TrainOptions = z.input<typeof trainOptionsSchema> & { onProgress?: OnProgress };
export type ParsedTrainOptions = z.output<typeof trainOptionsSchema>;

export const parseTrainOptions = (options: TrainOptions): ParsedTrainOptions => {
  const { onProgress: _onProgress, ...rest } = options;
  const parsed = trainOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TrainingError(
      `Invalid training option ${issue.path.join('.') || '(options)'}: ${issue.message}`,
    );
  }
  if (parsed.data.target_type && parsed.data.targetType && parsed.data.target_type !== parsed.data.targetType)
    throw new TrainingError('target_type and targetType disagree');
  return parsed.data;
};
