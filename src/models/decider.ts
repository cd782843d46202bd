import type { AnyRecordedEvent, ModelDeleted, ModelEvent } from '../../events';
import type { ProjectAggregate } from '../projects/aggregate';
import { requireLiveProject } from '../projects/decider';
import { conflict, invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';

export type ModelStatus = 'generating' | 'training' | 'complete' | 'error';

export type ModelVersion = {
  readonly version: number;
  readonly status: ModelStatus;
  readonly engine: string;
  readonly target: string;
  readonly query: string;
  readonly sourceDatabase: string;
  readonly options: Record<string, unknown>;
  readonly definedAt: string;
  readonly trainer: string | null;
  readonly artifactDigest: string | null;
  readonly accuracy: number | null;
  readonly error: string | null;
  readonly trainingMs: number | null;
};

export type Model = {
  readonly id: bigint;
  readonly name: string;
  readonly versions: ReadonlyMap<number, ModelVersion>;
  readonly activeVersion: number | null;
};
export type ModelsState = ReadonlyMap<string, Model>;

export const ENGINES = ['lightwood', 'mindledger'];

type Now = { now: Date };
export type Definition = {
  target: string;
  query: string;
  sourceDatabase: string;
  options: Record<string, unknown>;
};
export type ModelCommand =
  | { type: 'DefineModel'; data: { name: string; replace: boolean } & Definition; metadata: Now }
  | { type: 'RetrainModel'; data: { name: string } & Partial<Definition>; metadata: Now }
  | { type: 'StartTraining'; data: { name: string; version: number; trainer: string }; metadata: Now }
  | {
      type: 'CompleteTraining';
      data: {
        name: string;
        version: number;
        artifactDigest: string;
        accuracy: number;
        metric: string;
        columns: { name: string; dtype: string }[];
        rows: number;
        trainingMs: number;
      };
      metadata: Now;
    }
  | { type: 'FailTraining'; data: { name: string; version: number; error: string }; metadata: Now }
  | {
      type: 'UpdateModelOptions';
      data: { name: string; version?: number; options: Record<string, unknown> };
      metadata: Now;
    }
  | { type: 'DeleteModel'; data: { name: string; version?: number }; metadata: Now };

const key = nameKey;

const withVersion = (m: Model, v: ModelVersion): Model => ({
  ...m,
  versions: new Map(m.versions).set(v.version, v),
});

export const evolveModels = (models: ModelsState, event: AnyRecordedEvent): ModelsState => {
  if (!event.type.startsWith('Model')) return models;
  const e = event as unknown as ModelEvent;
  const current = models.get(key(e.data.name));
  const next = new Map(models);
  switch (e.type) {
    case 'ModelVersionDefined': {
      const d = e.data;
      const version: ModelVersion = {
        version: d.version,
        status: 'generating',
        engine: d.engine,
        target: d.target,
        query: d.query,
        sourceDatabase: d.sourceDatabase,
        options: d.options,
        definedAt: d.definedAt,
        trainer: null,
        artifactDigest: null,
        accuracy: null,
        error: null,
        trainingMs: null,
      };
      const model = current ?? {
        id: event.meta.position,
        name: d.name,
        versions: new Map(),
        activeVersion: null,
      };
      return next.set(key(d.name), withVersion(model, version));
    }
    case 'ModelDeleted':
      next.delete(key(e.data.name));
      return next;
    default: {
      if (!current) return models;
      const v = current.versions.get(e.data.version);
      if (!v) return models;
      switch (e.type) {
        case 'ModelTrainingStarted':
          return next.set(
            key(e.data.name),
            withVersion(current, { ...v, status: 'training', trainer: e.data.trainer }),
          );
        case 'ModelTrained':
          return next.set(
            key(e.data.name),
            withVersion(current, {
              ...v,
              status: 'complete',
              artifactDigest: e.data.artifactDigest,
              accuracy: e.data.accuracy,
              trainingMs: e.data.trainingMs,
            }),
          );
        case 'ModelTrainingFailed':
          return next.set(
            key(e.data.name),
            withVersion(current, { ...v, status: 'error', error: e.data.error }),
          );
        case 'ModelVersionActivated':
          return next.set(key(e.data.name), { ...current, activeVersion: e.data.version });
        case 'ModelOptionsUpdated':
          return next.set(key(e.data.name), withVersion(current, { ...v, options: e.data.options }));
        case 'ModelVersionDeleted': {
          const versions = new Map(current.versions);
          versions.delete(e.data.version);
          return next.set(key(e.data.name), {
            ...current,
            versions,
            activeVersion: current.activeVersion === e.data.version ? null : current.activeVersion,
          });
        }
      }
      return models;
    }
  }
};

export const findModel = (state: ProjectAggregate, name: string) => state.models.get(key(name));

export const requireModel = (state: ProjectAggregate, name: string): Model => {
  const model = findModel(state, name);
  if (!model) throw notFound(`Model with name ${name} not found`, 'Model not found');
  return model;
};

/** Model names may carry a version: `m.3`. */
export const splitVersion = (ref: string): { name: string; version: number | undefined } => {
  const m = /^(.+)\.(\d+)$/.exec(ref);
  return m ? { name: m[1]!, version: Number(m[2]) } : { name: ref, version: undefined };
};

const requireVersion = (model: Model, version: number): ModelVersion => {
  const v = model.versions.get(version);
  if (!v) throw notFound(`Model ${model.name} has no version ${version}`, 'Model not found');
  return v;
};

/** Removal of a whole model, for DROP MODEL and for a project's deletion. */
export const modelRemoval = (state: ProjectAggregate, model: Model, now: Date): ModelDeleted => {
  const project = requireLiveProject(state.project);
  return {
    type: 'ModelDeleted',
    data: {
      projectId: Number(project.id),
      project: project.name,
      name: model.name,
      deletedAt: now.toISOString(),
    },
  };
};

export const decideModel = (command: ModelCommand, state: ProjectAggregate): ModelEvent[] => {
  const project = requireLiveProject(state.project);
  const at = command.metadata.now.toISOString();
  const base = (name: string, version: number) => ({
    projectId: Number(project.id),
    project: project.name,
    name,
    version,
  });
  switch (command.type) {
    case 'DefineModel': {
      const d = command.data;
      const existing = findModel(state, d.name);
      if (existing && !d.replace)
        throw conflict(`Model with name ${d.name} already exists`, 'Model already exists');
      const engine = String(d.options.engine ?? 'lightwood').toLowerCase();
      if (!ENGINES.includes(engine))
        throw notFound(`Cannot find ML handler with name ${engine}`, 'ML handler not found');
      const events: ModelEvent[] = existing ? [modelRemoval(state, existing, command.metadata.now)] : [];
      events.push({
        type: 'ModelVersionDefined',
        data: {
          ...base(existing?.name ?? d.name, 1),
          engine,
          target: d.target,
          query: d.query,
          sourceDatabase: d.sourceDatabase,
          options: d.options,
          definedAt: at,
        },
      });
      return events;
    }
    case 'RetrainModel': {
      const model = requireModel(state, command.data.name);
      const from = model.versions.get(model.activeVersion ?? -1) ?? [...model.versions.values()].pop();
      if (!from) throw invalid(`Model ${model.name} has no version to retrain from`);
      const version = Math.max(...model.versions.keys()) + 1;
      const options = { ...from.options, ...(command.data.options ?? {}) };
      return [
        {
          type: 'ModelVersionDefined',
          data: {
            ...base(model.name, version),
            engine: String(options.engine ?? from.engine).toLowerCase(),
            target: command.data.target ?? from.target,
            query: command.data.query ?? from.query,
            sourceDatabase: command.data.sourceDatabase ?? from.sourceDatabase,
            options,
            definedAt: at,
          },
        },
      ];
    }
    case 'StartTraining': {
      const model = requireModel(state, command.data.name);
      const v = requireVersion(model, command.data.version);
      if (v.status !== 'generating')
        throw conflict(`Model ${model.name} version ${v.version} is ${v.status}`);
      return [
        {
          type: 'ModelTrainingStarted',
          data: { ...base(model.name, v.version), trainer: command.data.trainer, startedAt: at },
        },
      ];
    }
    case 'CompleteTraining': {
      const model = requireModel(state, command.data.name);
      const v = requireVersion(model, command.data.version);
      if (v.status !== 'training') return [];
      const { name: _n, version: _v, ...result } = command.data;
      const events: ModelEvent[] = [
        { type: 'ModelTrained', data: { ...base(model.name, v.version), ...result, trainedAt: at } },
      ];
      // A new version becomes active when complete, unless it was trained with active = false.
      const active = v.options.active;
      if (!(active === false || active === 0 || active === '0' || active === 'false'))
        events.push({
          type: 'ModelVersionActivated',
          data: { ...base(model.name, v.version), activatedAt: at },
        });
      return events;
    }
    case 'FailTraining': {
      const model = findModel(state, command.data.name);
      const v = model?.versions.get(command.data.version);
      if (!model || !v || v.status === 'complete' || v.status === 'error') return [];
      return [
        {
          type: 'ModelTrainingFailed',
          data: { ...base(model.name, v.version), error: command.data.error, failedAt: at },
        },
      ];
    }
    case 'UpdateModelOptions': {
      const model = requireModel(state, command.data.name);
      const version = command.data.version ?? model.activeVersion ?? Math.max(...model.versions.keys());
      const v = requireVersion(model, version);
      return [
        {
          type: 'ModelOptionsUpdated',
          data: {
            ...base(model.name, version),
            options: { ...v.options, ...command.data.options },
            updatedAt: at,
          },
        },
      ];
    }
    case 'DeleteModel': {
      const model = requireModel(state, command.data.name);
      if (command.data.version === undefined) return [modelRemoval(state, model, command.metadata.now)];
      requireVersion(model, command.data.version);
      if (model.versions.size === 1) return [modelRemoval(state, model, command.metadata.now)];
      return [
        { type: 'ModelVersionDeleted', data: { ...base(model.name, command.data.version), deletedAt: at } },
      ];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
