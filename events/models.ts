import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const modelResource: ResourceDeclaration = { kind: 'model' };

const options = freeFormObject();
const base = {
  projectId: z.number().int(),
  project: z.string(),
  name: z.string(),
  version: z.number().int().min(1),
};

/** MindsDB's `ORDER BY t [GROUP BY g, …] [WINDOW n] [HORIZON h]`: the version forecasts. */
const timeseries = z.object({
  orderBy: z.string(),
  groupBy: z.array(z.string()),
  window: z.number().int().nullable(),
  horizon: z.number().int().nullable(),
});

/** Rows a version learns from: `query` run in `sourceDatabase`. */
const trainingData = z.object({ sourceDatabase: z.string(), query: z.string() });

/**
 * A model version's definition: what to learn (`target`) from which rows (`query` in
 * `sourceDatabase`). `timeseries` is absent from definitions written before time-series models.
 * A version made by FINETUNE names the version it was fine-tuned from (`finetunedFrom`) and keeps
 * that version's rows (`priorData`, read again before its own): it learns from the old data plus
 * the new. Both are absent from other definitions.
 */
export const ModelVersionDefined = defineEvent(
  'ModelVersionDefined',
  z.object({
    ...base,
    engine: z.string(),
    target: z.string(),
    query: z.string(),
    sourceDatabase: z.string(),
    options,
    timeseries: timeseries.nullable().optional(),
    finetunedFrom: z.number().int().min(1).optional(),
    priorData: z.array(trainingData).optional(),
    definedAt: z.iso.datetime(),
  }),
  { resource: modelResource },
);
/** `trainer` names the process that trains it, so a restarted process can tell its own lost trainings. */
export const ModelTrainingStarted = defineEvent(
  'ModelTrainingStarted',
  z.object({ ...base, trainer: z.string(), startedAt: z.iso.datetime() }),
  { resource: modelResource },
);
/**
 * Coarse progress of one training (a phase and the percentage of the whole, about twenty per
 * training at most), on the version's own stream (`modelTrainingStream`), never the project's.
 * `versionId` is the position of the version's `ModelVersionDefined`: a late report of a training
 * whose model was replaced meanwhile names a version that no longer exists.
 */
export const ModelTrainingProgressed = defineEvent(
  'ModelTrainingProgressed',
  z.object({
    ...base,
    versionId: z.number().int(),
    phase: z.enum(['reading', 'encoding', 'training', 'calibrating']),
    percent: z.number().int().min(0).max(100),
    /** Rows the training query returned. */
    rows: z.number().int().min(0),
    progressedAt: z.iso.datetime(),
  }),
  { resource: modelResource },
);

/**
 * `targetType` … `columns[].importance` describe what was learnt (DESCRIBE); events written before
 * the engine's schema 2 lack them.
 */
export const ModelTrained = defineEvent(
  'ModelTrained',
  z.object({
    ...base,
    artifactDigest: z.string().regex(/^[0-9a-f]{64}$/),
    accuracy: z.number(),
    metric: z.string(),
    columns: z.array(
      z.object({
        name: z.string(),
        dtype: z.string(),
        /** How the column is fed to the model (Lightwood's encoder names where they exist). */
        encoder: z.string().optional(),
        /** `feature`, or for time series `order_by` / `group_by`. */
        role: z.string().optional(),
        /** Permutation importance relative to the most important column (0–1); null if not measured. */
        importance: z.number().nullable().optional(),
      }),
    ),
    rows: z.number().int(),
    trainingMs: z.number().int(),
    task: z.enum(['regression', 'classification', 'forecast']).optional(),
    /** `categorical` or `numeric`, and whether inferred or asked for with `USING target_type`. */
    targetType: z.enum(['categorical', 'numeric']).optional(),
    targetTypeSource: z.enum(['inferred', 'option']).optional(),
    /** The target's type as DESCRIBE shows it: integer, float, binary, categorical. */
    targetDtype: z.string().optional(),
    trainedAt: z.iso.datetime(),
  }),
  { resource: modelResource },
);
export const ModelTrainingFailed = defineEvent(
  'ModelTrainingFailed',
  z.object({ ...base, error: z.string(), failedAt: z.iso.datetime() }),
  { resource: modelResource },
);
export const ModelVersionActivated = defineEvent(
  'ModelVersionActivated',
  z.object({ ...base, activatedAt: z.iso.datetime() }),
  { resource: modelResource },
);
export const ModelOptionsUpdated = defineEvent(
  'ModelOptionsUpdated',
  z.object({ ...base, options, updatedAt: z.iso.datetime() }),
  { resource: modelResource },
);
export const ModelVersionDeleted = defineEvent(
  'ModelVersionDeleted',
  z.object({ ...base, deletedAt: z.iso.datetime() }),
  { resource: modelResource },
);
export const ModelDeleted = defineEvent(
  'ModelDeleted',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: modelResource },
);

export type ModelVersionDefined = EventOf<typeof ModelVersionDefined>;
export type ModelTrainingStarted = EventOf<typeof ModelTrainingStarted>;
export type ModelTrainingProgressed = EventOf<typeof ModelTrainingProgressed>;
export type ModelTrained = EventOf<typeof ModelTrained>;
export type ModelTrainingFailed = EventOf<typeof ModelTrainingFailed>;
export type ModelVersionActivated = EventOf<typeof ModelVersionActivated>;
export type ModelOptionsUpdated = EventOf<typeof ModelOptionsUpdated>;
export type ModelVersionDeleted = EventOf<typeof ModelVersionDeleted>;
export type ModelDeleted = EventOf<typeof ModelDeleted>;
export type ModelEvent =
  | ModelVersionDefined
  | ModelTrainingStarted
  | ModelTrainingProgressed
  | ModelTrained
  | ModelTrainingFailed
  | ModelVersionActivated
  | ModelOptionsUpdated
  | ModelVersionDeleted
  | ModelDeleted;
export const modelContracts = [
  ModelVersionDefined,
  ModelTrainingStarted,
  ModelTrainingProgressed,
  ModelTrained,
  ModelTrainingFailed,
  ModelVersionActivated,
  ModelOptionsUpdated,
  ModelVersionDeleted,
  ModelDeleted,
] as const;
