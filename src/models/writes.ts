import type { AppContext } from '../context';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid } from '../shared/errors';
import { ENGINES, type Definition } from './decider';
import { llmEngineOf, type LlmEngineLookup } from './llmEngines';
import type { ModelView } from './present';
import { findModel, splitVersion } from './state';
import type { modelTrainer, TrainingRows } from './training';
import { loadModel, modelView, runModelCommand } from './versions';

/** What the model writes need: the log, the projects, the rows they learn from, the trainer, the LLM engines. */
export type ModelWriteDeps = {
  readonly ctx: AppContext;
  readonly projects: ProjectDirectory;
  readonly training: TrainingRows;
  readonly trainer: ReturnType<typeof modelTrainer>;
  readonly llmEngines: LlmEngineLookup;
};

/** `join_learn_process`: the statement answers once training is done. */
const waitFlag = (options: Record<string, unknown>) => {
  const v = options.join_learn_process;
  return v === true || v === 1 || v === 'true' || v === '1';
};

/** CREATE MODEL: version 1, trained now (or, for an LLM model, ready as defined). */
export const createModel = async (
  deps: ModelWriteDeps,
  projectName: string,
  def: { name: string; replace: boolean; ifNotExists: boolean } & Definition,
): Promise<ModelView> => {
  const { projects, training, trainer } = deps;
  const project = await projects.require(projectName);
  if (def.ifNotExists && (await loadModel(deps, project.name, def.name)))
    return modelView(deps, project.name, def.name);
  const llmEngine = await llmEngineOf(deps.llmEngines, def.options.engine);
  const trained = ENGINES.includes(String(def.options.engine ?? 'lightwood').toLowerCase());
  // Without rows, an engine that learns from them is refused here; an unknown one is 404 below.
  if (!llmEngine && trained && def.query.trim() === '')
    throw invalid(
      `CREATE MODEL needs FROM <database> (SELECT …): engine ${String(def.options.engine ?? 'lightwood')} learns from rows (an LLM model names an engine made FROM openai, ollama, …)`,
    );
  if (def.query.trim() !== '') await training.readable?.(def.sourceDatabase, def.query);
  const outcome = await runModelCommand(deps, project.name, {
    type: 'DefineModel',
    data: { ...def, ...(llmEngine ? { llmEngine } : {}) },
  });
  const defined = findModel(outcome.state.models, def.name)!;
  // An LLM model is ready as defined: nothing to train.
  if (!defined.versions.get(1)?.llm)
    await trainer.launch(project.name, defined.name, 1, waitFlag(def.options));
  return modelView(deps, project.name, `${defined.name}.1`);
};

/** RETRAIN: a new version from the active one's definition, `def` over it. */
export const retrainModel = async (
  deps: ModelWriteDeps,
  projectName: string,
  name: string,
  def: Partial<Definition>,
): Promise<ModelView> => {
  const { projects, training, trainer } = deps;
  const project = await projects.require(projectName);
  const before = await loadModel(deps, project.name, name);
  const from = before?.versions.get(before.activeVersion ?? Math.max(...before.versions.keys()));
  const llmEngine = from ? await llmEngineOf(deps.llmEngines, def.options?.engine ?? from.engine) : undefined;
  if (def.query?.trim() && def.sourceDatabase) await training.readable?.(def.sourceDatabase, def.query);
  const outcome = await runModelCommand(deps, project.name, {
    type: 'RetrainModel',
    data: { name, ...def, ...(llmEngine ? { llmEngine } : {}) },
  });
  const model = findModel(outcome.state.models, name)!;
  const version = Math.max(...model.versions.keys());
  if (!model.versions.get(version)!.llm)
    await trainer.launch(project.name, model.name, version, waitFlag(model.versions.get(version)!.options));
  return modelView(deps, project.name, `${model.name}.${version}`);
};

/** FINETUNE: a new version learning from the fine-tuned version's rows plus `def`'s. */
export const finetuneModel = async (
  deps: ModelWriteDeps,
  projectName: string,
  ref: string,
  def: { query: string; sourceDatabase: string; options: Record<string, unknown> },
): Promise<ModelView> => {
  const { projects, training, trainer } = deps;
  const project = await projects.require(projectName);
  const whole = await loadModel(deps, project.name, ref);
  const { name, version } = whole ? { name: ref, version: undefined } : splitVersion(ref);
  await training.readable?.(def.sourceDatabase, def.query);
  const outcome = await runModelCommand(deps, project.name, {
    type: 'FinetuneModel',
    data: { name, version, ...def },
  });
  const model = findModel(outcome.state.models, name)!;
  const tuned = Math.max(...model.versions.keys());
  await trainer.launch(project.name, model.name, tuned, waitFlag(model.versions.get(tuned)!.options));
  return modelView(deps, project.name, `${model.name}.${tuned}`);
};

/** Changes a version's options (`m.N`, or the model's active one). */
export const updateModelOptions = async (
  deps: ModelWriteDeps,
  projectName: string,
  ref: string,
  options: Record<string, unknown>,
) => {
  const project = await deps.projects.require(projectName);
  const { name, version } = splitVersion(ref);
  await runModelCommand(deps, project.name, {
    type: 'UpdateModelOptions',
    data: { name, version, options },
  });
  return modelView(deps, project.name, ref);
};

/** Deletes a model, or one version of it (`m.N`). */
export const removeModel = async (deps: ModelWriteDeps, projectName: string, ref: string) => {
  const project = await deps.projects.require(projectName);
  const whole = await loadModel(deps, project.name, ref);
  const { name, version } = whole ? { name: ref, version: undefined } : splitVersion(ref);
  await runModelCommand(deps, project.name, { type: 'DeleteModel', data: { name, version } });
};
