import type { ArtifactV2, TabularArtifact } from './artifact';
import { parseTrainOptions, type TrainOptions } from './options';
import type { TrainingData } from './table';
import { trainParsed } from './train';

export { TrainingError } from './trainingError';
export type { TrainOptions } from './options';

/**
 * Trains a model for `target`: infers column and target types (or takes `target_type`), encodes
 * features, splits train/dev/calibration (80/10/10, seeded), trains the candidates (histogram
 * gradient-boosted trees, ridge, baseline; a random forest for classes up to 20,000 rows), keeps
 * the best on dev, calibrates probabilities and the decision (classes) and the conformal scores on
 * the held-out split, and measures permutation importance. With `orderBy`, trains a forecaster instead (see timeseries.ts).
 * Rows of objects are adapted to columns once; columns (typed arrays for numbers) are used as given.
 */
export function trainModel(
  data: TrainingData,
  target: string,
  options?: TrainOptions & { orderBy?: undefined },
): TabularArtifact;
export function trainModel(data: TrainingData, target: string, options: TrainOptions): ArtifactV2;
// A declaration, not an arrow: overloads give table models their precise type without a cast.
export function trainModel(data: TrainingData, target: string, options: TrainOptions = {}): ArtifactV2 {
  return trainParsed(data, target, parseTrainOptions(options), options.onProgress);
}
