import type { ModelDeleted, RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { defineProjectSlice, type ProjectRef } from '../shared/projectState';
import { deletingEach } from '../shared/resourceState';
import { nameKey } from '../shared/names';
import type { TimeSeriesSettings } from './options';

type ModelStatus = 'generating' | 'training' | 'complete' | 'error';

/** Rows a version learns from: `query` run in `sourceDatabase`. */
export type TrainingData = { readonly sourceDatabase: string; readonly query: string };

export type ModelVersion = {
  /** Position of its `ModelVersionDefined`: names its training's progress stream. */
  readonly id: bigint;
  readonly version: number;
  readonly status: ModelStatus;
  readonly engine: string;
  readonly target: string;
  readonly query: string;
  readonly sourceDatabase: string;
  readonly options: Record<string, unknown>;
  readonly timeseries: TimeSeriesSettings | null;
  /** FINETUNE: the version it was fine-tuned from, whose rows (`priorData`) it learns from too. */
  readonly finetunedFrom: number | null;
  readonly priorData: readonly TrainingData[];
  readonly definedAt: string;
  readonly trainer: string | null;
  readonly artifactDigest: string | null;
  readonly accuracy: number | null;
  readonly error: string | null;
  readonly trainingMs: number | null;
  /** An LLM model's version (complete at once, answered by its provider); null for a trained one. */
  readonly llm: LlmVersion | null;
};

/** What an LLM model's version calls: the engine (null: the handler named directly), provider and model. */
export type LlmVersion = {
  readonly engine: string | null;
  readonly provider: string;
  readonly providerModel: string | null;
  readonly mode: string;
};

export type Model = {
  readonly id: bigint;
  readonly name: string;
  readonly versions: ReadonlyMap<number, ModelVersion>;
  readonly activeVersion: number | null;
};
export type ModelsState = ReadonlyMap<string, Model>;

const withVersion = (m: Model, v: ModelVersion): Model => ({
  ...m,
  versions: new Map(m.versions).set(v.version, v),
});

/** The model's version `version` changed by `change`; the state as is when either is unknown. */
const changeVersion = (
  models: ModelsState,
  { name, version }: { readonly name: string; readonly version: number },
  change: (v: ModelVersion) => ModelVersion,
): ModelsState => {
  const current = models.get(nameKey(name));
  const v = current?.versions.get(version);
  if (!current || !v) return models;
  return new Map(models).set(nameKey(name), withVersion(current, change(v)));
};

const evolveModels = (models: ModelsState, event: RecordedEvent): ModelsState => {
  switch (event.type) {
    case 'ModelVersionDefined': {
      const d = event.data;
      const version: ModelVersion = {
        id: event.meta.position,
        version: d.version,
        status: 'generating',
        engine: d.engine,
        target: d.target,
        query: d.query,
        sourceDatabase: d.sourceDatabase,
        options: d.options,
        timeseries: d.timeseries ?? null,
        finetunedFrom: d.finetunedFrom ?? null,
        priorData: d.priorData ?? [],
        definedAt: d.definedAt,
        trainer: null,
        artifactDigest: null,
        accuracy: null,
        error: null,
        trainingMs: null,
        llm: null,
      };
      const model = models.get(nameKey(d.name)) ?? {
        id: event.meta.position,
        name: d.name,
        versions: new Map(),
        activeVersion: null,
      };
      return new Map(models).set(nameKey(d.name), withVersion(model, version));
    }
    case 'ModelDeleted': {
      const next = new Map(models);
      next.delete(nameKey(event.data.name));
      return next;
    }
    case 'ModelTrainingStarted': {
      const { trainer } = event.data;
      return changeVersion(models, event.data, (v) => ({ ...v, status: 'training', trainer }));
    }
    case 'ModelTrained': {
      const d = event.data;
      return changeVersion(models, d, (v) => ({
        ...v,
        status: 'complete',
        artifactDigest: d.artifactDigest,
        accuracy: d.accuracy,
        trainingMs: d.trainingMs,
      }));
    }
    case 'LlmModelReady': {
      const d = event.data;
      return changeVersion(models, d, (v) => ({
        ...v,
        status: 'complete',
        trainingMs: 0,
        llm: { engine: d.engine, provider: d.provider, providerModel: d.providerModel, mode: d.mode },
      }));
    }
    case 'ModelTrainingFailed': {
      const { error } = event.data;
      return changeVersion(models, event.data, (v) => ({ ...v, status: 'error', error }));
    }
    case 'ModelOptionsUpdated': {
      const { options } = event.data;
      return changeVersion(models, event.data, (v) => ({ ...v, options }));
    }
    case 'ModelVersionActivated': {
      const current = models.get(nameKey(event.data.name));
      if (!current?.versions.has(event.data.version)) return models;
      return new Map(models).set(nameKey(event.data.name), { ...current, activeVersion: event.data.version });
    }
    case 'ModelVersionDeleted': {
      const current = models.get(nameKey(event.data.name));
      if (!current?.versions.has(event.data.version)) return models;
      const versions = new Map(current.versions);
      versions.delete(event.data.version);
      return new Map(models).set(nameKey(event.data.name), {
        ...current,
        versions,
        activeVersion: current.activeVersion === event.data.version ? null : current.activeVersion,
      });
    }
    default:
      return models;
  }
};

export const findModel = (models: ModelsState, name: string) => models.get(nameKey(name));

/** Every query a version learns from, in the order they are read: the prior data, then its own. */
export const trainingDataOf = (v: ModelVersion): TrainingData[] => [
  ...v.priorData,
  { sourceDatabase: v.sourceDatabase, query: v.query },
];

/** Model names may carry a version: `m.3`. */
export const splitVersion = (ref: string): { name: string; version: number | undefined } => {
  const m = /^(.+)\.(\d+)$/.exec(ref);
  return m ? { name: m[1]!, version: Number(m[2]) } : { name: ref, version: undefined };
};

/** Removal of a whole model: DROP MODEL's (of its last version too), its replacement's, its project's deletion's. */
export const modelDeleted = (model: Model, project: ProjectRef, at: string): ModelDeleted => ({
  type: 'ModelDeleted',
  data: { projectId: Number(project.id), project: project.name, name: model.name, deletedAt: at },
});

export const modelsSlice = defineProjectSlice({
  key: 'models',
  initial: (): ModelsState => new Map(),
  evolve: evolveModels,
  cascade: deletingEach(modelDeleted),
});

/**
 * A training's progress reports live on a stream of their own (about twenty per training), so
 * the project's stream, which every command on the project folds, stays small.
 */
export const modelTrainingStream = (versionId: bigint | number) => `model-training-${versionId}`;

/** The last report on a training's stream: a report must move forward. */
export type TrainingProgressState = { readonly percent: number; readonly phase: string | null };

export const trainingProgressAggregate: Aggregate<TrainingProgressState> = {
  initialState: () => ({ percent: -1, phase: null }),
  evolve: (state, event: RecordedEvent): TrainingProgressState => {
    switch (event.type) {
      case 'ModelTrainingProgressed':
        return { percent: event.data.percent, phase: event.data.phase };
      default:
        return state;
    }
  },
};
