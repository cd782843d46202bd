import type {
  LlmModelReady,
  ModelEvent,
  ModelTrained,
  ModelTrainingProgressed,
  ModelVersionDefined,
} from '../../events';
import { llmModelSpec, LlmSpecError } from '../engines/llm/llmModelSpec';
import { BYOM_HANDLER, ML_HANDLERS } from '../mlEngines/state';
import type { ProjectAggregate, ProjectRef } from '../shared/projectState';
import { conflict, invalid, notFound } from '../shared/errors';
import { decideInProject, type Now, type ProjectRule } from '../shared/decision';
import { trainingDefinitionProblem, type TimeSeriesSettings } from './options';
import {
  findModel,
  modelDeleted,
  trainingDataOf,
  type Model,
  type ModelVersion,
  type TrainingProgressState,
} from './state';

/** What model commands are decided on: the project and its models. */
type ModelDecisionState = Pick<ProjectAggregate, 'project' | 'models'>;

/** What model commands decide: the models' events, and an LLM model's version being ready. */
type ModelDecisionEvent = ModelEvent | LlmModelReady;

export const ENGINES = ['lightwood', 'mindledger'];

export type Definition = {
  target: string;
  query: string;
  sourceDatabase: string;
  options: Record<string, unknown>;
  /** ORDER BY … [GROUP BY …] [WINDOW n] [HORIZON h]: the model forecasts. */
  timeseries?: TimeSeriesSettings | null;
};

/** What a training learnt, as DESCRIBE shows it (the `ModelTrained` event's description fields). */
type TrainingDescription = Pick<
  ModelTrained['data'],
  'task' | 'targetType' | 'targetTypeSource' | 'targetDtype'
>;
/**
 * The ML engine an LLM model calls through, as the service found it (engines live on streams of
 * their own): its name and its handler. Absent: `engine` names no LLM engine.
 */
export type LlmEngineRef = { readonly name: string | null; readonly handler: string };

export type ModelCommand =
  | {
      type: 'DefineModel';
      data: { name: string; replace: boolean; llmEngine?: LlmEngineRef } & Definition;
      metadata: Now;
    }
  | {
      type: 'RetrainModel';
      data: { name: string; llmEngine?: LlmEngineRef } & Partial<Definition>;
      metadata: Now;
    }
  | {
      type: 'FinetuneModel';
      data: {
        name: string;
        /** The version fine-tuned: the active one (or the newest) when absent. */
        version?: number;
        query: string;
        sourceDatabase: string;
        options: Record<string, unknown>;
      };
      metadata: Now;
    }
  | { type: 'StartTraining'; data: { name: string; version: number; trainer: string }; metadata: Now }
  | {
      type: 'CompleteTraining';
      data: {
        name: string;
        version: number;
        artifactDigest: string;
        accuracy: number;
        metric: string;
        columns: ModelTrained['data']['columns'];
        rows: number;
        trainingMs: number;
      } & TrainingDescription;
      metadata: Now;
    }
  | { type: 'FailTraining'; data: { name: string; version: number; error: string }; metadata: Now }
  | {
      type: 'UpdateModelOptions';
      data: { name: string; version?: number; options: Record<string, unknown> };
      metadata: Now;
    }
  | { type: 'DeleteModel'; data: { name: string; version?: number }; metadata: Now };

const requireModel = (state: ModelDecisionState, name: string): Model => {
  const model = findModel(state.models, name);
  if (!model) throw notFound(`Model with name ${name} not found`, 'Model not found');
  return model;
};

const requireVersion = (model: Model, version: number): ModelVersion => {
  const v = model.versions.get(version);
  if (!v) throw notFound(`Model ${model.name} has no version ${version}`, 'Model not found');
  return v;
};

/** The engine's objections to a definition, refused before anything is recorded (400, a SQL error). */
const requireTrainable = (
  statement: string,
  target: string,
  options: Record<string, unknown>,
  ts: TimeSeriesSettings | null,
) => {
  const problem = trainingDefinitionProblem(target, options, ts);
  if (problem) throw invalid(`${statement}: ${problem}`, 'Invalid model definition');
};

type Decide<T extends ModelCommand['type']> = ProjectRule<
  ModelCommand,
  T,
  ModelDecisionState,
  ModelDecisionEvent
>;

/** The fields every version's event starts with. */
const versionRef = (project: ProjectRef, name: string, version: number) => ({
  projectId: Number(project.id),
  project: project.name,
  name,
  version,
});

/** A forecaster's settings, copied into a new version's event (nothing when it forecasts nothing). */
const timeseriesOf = (ts: TimeSeriesSettings | null | undefined) =>
  ts ? { timeseries: { ...ts, groupBy: [...ts.groupBy] } } : {};

/**
 * A version's definition, the one event every way of making a version appends (CREATE, an LLM
 * model, RETRAIN, FINETUNE): the name and version, then what it trains on and how, then when.
 */
const versionDefined = (
  project: ProjectRef,
  name: string,
  version: number,
  definition: Omit<
    ModelVersionDefined['data'],
    'projectId' | 'project' | 'name' | 'version' | 'definedAt' | 'timeseries'
  > & {
    timeseries?: TimeSeriesSettings | null;
  },
  at: string,
): ModelVersionDefined => {
  const { engine, target, query, sourceDatabase, options, timeseries, ...finetuned } = definition;
  return {
    type: 'ModelVersionDefined',
    data: {
      ...versionRef(project, name, version),
      engine,
      target,
      query,
      sourceDatabase,
      options,
      ...timeseriesOf(timeseries),
      ...finetuned,
      definedAt: at,
    },
  };
};

/** Whether a version becomes active once ready (complete, or an LLM model's at once): unless made with active = false. */
const activates = (options: Record<string, unknown>) => {
  const active = options.active;
  return !(active === false || active === 0 || active === '0' || active === 'false');
};

/** A version becoming the model's active one. */
const activation = (project: ProjectRef, name: string, version: number, at: string): ModelDecisionEvent => ({
  type: 'ModelVersionActivated',
  data: { ...versionRef(project, name, version), activatedAt: at },
});

const nextVersion = (model: Model) => Math.max(...model.versions.keys()) + 1;

/** The version a command names, else the active one, else the newest. */
const versionOrActive = (model: Model, version: number | undefined) =>
  version ?? model.activeVersion ?? Math.max(...model.versions.keys());

/**
 * An LLM model's version, ready as it is defined (nothing to learn): its definition, checked as it
 * will run (`llmModelSpec`), then `LlmModelReady` (and its activation, unless `active = false`).
 */
const llmVersion = (
  statement: string,
  project: ProjectRef,
  name: string,
  version: number,
  def: { engine: string; target: string; options: Record<string, unknown>; query: string },
  ref: LlmEngineRef,
  at: string,
): ModelDecisionEvent[] => {
  if (def.query.trim() !== '')
    throw invalid(
      `${statement}: an LLM model (engine ${def.engine}) learns nothing from rows: drop FROM (SELECT …)`,
      'Invalid model definition',
    );
  let inputs: readonly string[];
  let mode: string;
  try {
    ({ inputs, mode } = llmModelSpec(def.target, def.options));
  } catch (error) {
    if (error instanceof LlmSpecError)
      throw invalid(`${statement}: ${error.message}`, 'Invalid model definition');
    throw error;
  }
  const modelName = def.options.model_name ?? def.options.model_id ?? def.options.model;
  const ready: LlmModelReady = {
    type: 'LlmModelReady',
    data: {
      ...versionRef(project, name, version),
      engine: ref.name,
      provider: ref.handler,
      providerModel: typeof modelName === 'string' && modelName.trim() !== '' ? modelName.trim() : null,
      mode,
      inputs: [...inputs],
      readyAt: at,
    },
  };
  const events: ModelDecisionEvent[] = [
    versionDefined(
      project,
      name,
      version,
      { engine: def.engine, target: def.target, query: '', sourceDatabase: '', options: def.options },
      at,
    ),
    ready,
  ];
  if (activates(def.options)) events.push(activation(project, name, version, at));
  return events;
};

/**
 * `USING engine = 'x'` naming no ML engine: says so, and shows the statement that makes one (an
 * LLM provider's engine is made from its handler with its key; MindsDB said "Cannot find ML handler").
 */
const noSuchEngine = (engine: string) => {
  const handler = ML_HANDLERS.includes(engine) && engine !== BYOM_HANDLER ? engine : '<handler>';
  const key = handler === '<handler>' ? 'api_key' : `${engine}_api_key`;
  return `No ML engine named ${engine} exists: make one with CREATE ML_ENGINE ${engine} FROM ${handler} USING ${key} = '…' (handlers: ${ML_HANDLERS.join(', ')}), or use a built-in engine (${ENGINES.join(', ')})`;
};

const defineModel: Decide<'DefineModel'> = (command, state, { project, at }) => {
  const d = command.data;
  const existing = findModel(state.models, d.name);
  if (existing && !d.replace)
    throw conflict(`Model with name ${d.name} already exists`, 'Model already exists');
  const engine = String(d.options.engine ?? 'lightwood').toLowerCase();
  if (d.llmEngine)
    return [
      ...(existing ? [modelDeleted(existing, project, at)] : []),
      ...llmVersion(
        `CREATE MODEL ${d.name}`,
        project,
        existing?.name ?? d.name,
        1,
        { engine, target: d.target, options: d.options, query: d.query },
        d.llmEngine,
        at,
      ),
    ];
  if (!ENGINES.includes(engine)) throw notFound(noSuchEngine(engine), 'ML handler not found');
  requireTrainable(`CREATE MODEL ${d.name}`, d.target, d.options, d.timeseries ?? null);
  const events: ModelDecisionEvent[] = existing ? [modelDeleted(existing, project, at)] : [];
  events.push(
    versionDefined(
      project,
      existing?.name ?? d.name,
      1,
      {
        engine,
        target: d.target,
        query: d.query,
        sourceDatabase: d.sourceDatabase,
        options: d.options,
        timeseries: d.timeseries,
      },
      at,
    ),
  );
  return events;
};

const retrainModel: Decide<'RetrainModel'> = (command, state, { project, at }) => {
  const model = requireModel(state, command.data.name);
  const from = model.versions.get(model.activeVersion ?? -1) ?? [...model.versions.values()].pop();
  if (!from) throw invalid(`Model ${model.name} has no version to retrain from`);
  const version = nextVersion(model);
  const options = { ...from.options, ...(command.data.options ?? {}) };
  const target = command.data.target ?? from.target;
  if (command.data.llmEngine)
    return llmVersion(
      `RETRAIN ${model.name}`,
      project,
      model.name,
      version,
      {
        engine: String(options.engine ?? from.engine).toLowerCase(),
        target,
        options,
        query: command.data.query ?? '',
      },
      command.data.llmEngine,
      at,
    );
  // Retrained on the same rows, a fine-tuned version keeps its prior data; new rows replace all.
  const priorData = command.data.query === undefined ? from.priorData : [];
  // A retrained forecaster stays one: its ORDER BY … HORIZON carry over unless given anew.
  const timeseries = command.data.timeseries ?? from.timeseries;
  requireTrainable(`RETRAIN ${model.name}`, target, options, timeseries);
  return [
    versionDefined(
      project,
      model.name,
      version,
      {
        engine: String(options.engine ?? from.engine).toLowerCase(),
        target,
        query: command.data.query ?? from.query,
        sourceDatabase: command.data.sourceDatabase ?? from.sourceDatabase,
        options,
        timeseries,
        ...(from.finetunedFrom !== null && priorData.length > 0
          ? { finetunedFrom: from.finetunedFrom, priorData: priorData.map((p) => ({ ...p })) }
          : {}),
      },
      at,
    ),
  ];
};

const finetuneModel: Decide<'FinetuneModel'> = (command, state, { project, at }) => {
  const model = requireModel(state, command.data.name);
  const tuned = requireVersion(model, versionOrActive(model, command.data.version));
  if (tuned.llm)
    throw invalid(
      `FINETUNE ${model.name}: an LLM model is not fine-tuned here (change its prompt with RETRAIN … USING prompt_template = '…')`,
      'Invalid model definition',
    );
  if (tuned.status !== 'complete')
    throw conflict(
      `FINETUNE ${model.name}: version ${tuned.version} is ${tuned.status}; only a trained version can be fine-tuned`,
      'Model not ready',
    );
  const version = nextVersion(model);
  const options = { ...tuned.options, ...command.data.options };
  requireTrainable(`FINETUNE ${model.name}`, tuned.target, options, tuned.timeseries);
  return [
    versionDefined(
      project,
      model.name,
      version,
      {
        engine: String(options.engine ?? tuned.engine).toLowerCase(),
        target: tuned.target,
        query: command.data.query,
        sourceDatabase: command.data.sourceDatabase,
        options,
        timeseries: tuned.timeseries,
        finetunedFrom: tuned.version,
        priorData: trainingDataOf(tuned),
      },
      at,
    ),
  ];
};

const startTraining: Decide<'StartTraining'> = (command, state, { project, at }) => {
  const model = requireModel(state, command.data.name);
  const v = requireVersion(model, command.data.version);
  if (v.status !== 'generating') throw conflict(`Model ${model.name} version ${v.version} is ${v.status}`);
  return [
    {
      type: 'ModelTrainingStarted',
      data: { ...versionRef(project, model.name, v.version), trainer: command.data.trainer, startedAt: at },
    },
  ];
};

const completeTraining: Decide<'CompleteTraining'> = (command, state, { project, at }) => {
  const model = requireModel(state, command.data.name);
  const v = requireVersion(model, command.data.version);
  if (v.status !== 'training') return [];
  const { name: _n, version: _v, ...result } = command.data;
  const events: ModelDecisionEvent[] = [
    {
      type: 'ModelTrained',
      data: { ...versionRef(project, model.name, v.version), ...result, trainedAt: at },
    },
  ];
  if (activates(v.options)) events.push(activation(project, model.name, v.version, at));
  return events;
};

const failTraining: Decide<'FailTraining'> = (command, state, { project, at }) => {
  const model = findModel(state.models, command.data.name);
  const v = model?.versions.get(command.data.version);
  if (!model || !v || v.status === 'complete' || v.status === 'error') return [];
  return [
    {
      type: 'ModelTrainingFailed',
      data: { ...versionRef(project, model.name, v.version), error: command.data.error, failedAt: at },
    },
  ];
};

const updateModelOptions: Decide<'UpdateModelOptions'> = (command, state, { project, at }) => {
  const model = requireModel(state, command.data.name);
  const version = versionOrActive(model, command.data.version);
  const v = requireVersion(model, version);
  return [
    {
      type: 'ModelOptionsUpdated',
      data: {
        ...versionRef(project, model.name, version),
        options: { ...v.options, ...command.data.options },
        updatedAt: at,
      },
    },
  ];
};

/** Deleting a model's only version (or naming none) deletes the model. */
const deleteModel: Decide<'DeleteModel'> = (command, state, { project, at }) => {
  const model = requireModel(state, command.data.name);
  if (command.data.version === undefined) return [modelDeleted(model, project, at)];
  requireVersion(model, command.data.version);
  if (model.versions.size === 1) return [modelDeleted(model, project, at)];
  return [
    {
      type: 'ModelVersionDeleted',
      data: { ...versionRef(project, model.name, command.data.version), deletedAt: at },
    },
  ];
};

export const decideModel = decideInProject<ModelCommand, ModelDecisionState, ModelDecisionEvent>({
  DefineModel: defineModel,
  RetrainModel: retrainModel,
  FinetuneModel: finetuneModel,
  StartTraining: startTraining,
  CompleteTraining: completeTraining,
  FailTraining: failTraining,
  UpdateModelOptions: updateModelOptions,
  DeleteModel: deleteModel,
});

/** A training's progress, on the version's own stream (see `modelTrainingStream`). */
export type ReportTrainingProgress = {
  type: 'ReportTrainingProgress';
  data: Omit<ModelTrainingProgressed['data'], 'progressedAt'>;
  metadata: Now;
};

const PHASES: readonly string[] = ['reading', 'encoding', 'training', 'calibrating'];

/**
 * Reports only move forward (a higher percentage, or the next phase at the same one): a repeated
 * or older report records nothing.
 */
export const decideTrainingProgress = (
  command: ReportTrainingProgress,
  state: TrainingProgressState,
): ModelTrainingProgressed[] => {
  const { percent, phase } = command.data;
  const later = state.phase === null || PHASES.indexOf(phase) > PHASES.indexOf(state.phase);
  if (percent < state.percent || (percent === state.percent && !later)) return [];
  if (state.phase !== null && PHASES.indexOf(phase) < PHASES.indexOf(state.phase)) return [];
  return [
    {
      type: 'ModelTrainingProgressed',
      data: { ...command.data, progressedAt: command.metadata.now.toISOString() },
    },
  ];
};
