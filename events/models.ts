import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf } from './contract';

const options = freeFormObject();
const base = {
  projectId: z.number().int(),
  project: z.string(),
  name: z.string(),
  version: z.number().int().min(1),
};

/** A model version's definition: what to learn (`target`) from which rows (`query` in `sourceDatabase`). */
export const ModelVersionDefined = defineEvent(
  'ModelVersionDefined',
  z.object({
    ...base,
    engine: z.string(),
    target: z.string(),
    query: z.string(),
    sourceDatabase: z.string(),
    options,
    definedAt: z.iso.datetime(),
  }),
);
/** `trainer` names the process that trains it, so a restarted process can tell its own lost trainings. */
export const ModelTrainingStarted = defineEvent(
  'ModelTrainingStarted',
  z.object({ ...base, trainer: z.string(), startedAt: z.iso.datetime() }),
);
export const ModelTrained = defineEvent(
  'ModelTrained',
  z.object({
    ...base,
    artifactDigest: z.string().regex(/^[0-9a-f]{64}$/),
    accuracy: z.number(),
    metric: z.string(),
    columns: z.array(z.object({ name: z.string(), dtype: z.string() })),
    rows: z.number().int(),
    trainingMs: z.number().int(),
    trainedAt: z.iso.datetime(),
  }),
);
export const ModelTrainingFailed = defineEvent(
  'ModelTrainingFailed',
  z.object({ ...base, error: z.string(), failedAt: z.iso.datetime() }),
);
export const ModelVersionActivated = defineEvent(
  'ModelVersionActivated',
  z.object({ ...base, activatedAt: z.iso.datetime() }),
);
export const ModelOptionsUpdated = defineEvent(
  'ModelOptionsUpdated',
  z.object({ ...base, options, updatedAt: z.iso.datetime() }),
);
export const ModelVersionDeleted = defineEvent(
  'ModelVersionDeleted',
  z.object({ ...base, deletedAt: z.iso.datetime() }),
);
export const ModelDeleted = defineEvent(
  'ModelDeleted',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
);

export type ModelVersionDefined = EventOf<typeof ModelVersionDefined>;
export type ModelTrainingStarted = EventOf<typeof ModelTrainingStarted>;
export type ModelTrained = EventOf<typeof ModelTrained>;
export type ModelTrainingFailed = EventOf<typeof ModelTrainingFailed>;
export type ModelVersionActivated = EventOf<typeof ModelVersionActivated>;
export type ModelOptionsUpdated = EventOf<typeof ModelOptionsUpdated>;
export type ModelVersionDeleted = EventOf<typeof ModelVersionDeleted>;
export type ModelDeleted = EventOf<typeof ModelDeleted>;
export type ModelEvent =
  | ModelVersionDefined
  | ModelTrainingStarted
  | ModelTrained
  | ModelTrainingFailed
  | ModelVersionActivated
  | ModelOptionsUpdated
  | ModelVersionDeleted
  | ModelDeleted;
export const modelContracts = [
  ModelVersionDefined,
  ModelTrainingStarted,
  ModelTrained,
  ModelTrainingFailed,
  ModelVersionActivated,
  ModelOptionsUpdated,
  ModelVersionDeleted,
  ModelDeleted,
] as const;
