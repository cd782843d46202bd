import fs from 'node:fs';
import type { Artifact } from '../engines/ml/artifact';
import { makePredictor, type Predictor } from '../engines/ml/predict';
import type { ScoringPool } from '../engines/ml/scoringPool';
import type { BlobStore } from '../storage/blobs';
import { BoundedMap } from '../shared/boundedMap';
import { conflict } from '../shared/errors';
import type { ModelVersion } from './state';

const MAX_PREDICTORS = 16;

/** Predictors by their artifact's digest, loaded from the blob store on first use; bounded, oldest out. */
export const predictorCache = (blobs: BlobStore, pool: ScoringPool) => {
  const predictors = new BoundedMap<string, Predictor>(MAX_PREDICTORS);
  return async (digest: string) => {
    const cached = predictors.get(digest);
    if (cached) return cached;
    const file = await blobs.ensureLocal(digest, 'model.json');
    const predictor = makePredictor(JSON.parse(await fs.promises.readFile(file, 'utf8')) as Artifact, pool);
    predictors.set(digest, predictor);
    return predictor;
  };
};

/** The artifact digest of a complete version: 409 while it trains or after it failed. */
export const completeArtifact = (name: string, version: ModelVersion) => {
  if (version.status !== 'complete' || !version.artifactDigest)
    throw conflict(
      `Model ${name} (version ${version.version}) is ${version.status}: model creation not completed${version.error ? ` (${version.error})` : ''}`,
      'Model not ready',
    );
  return version.artifactDigest;
};
