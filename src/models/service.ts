import type { AppContext } from '../context';
import type { Row } from '../engines/ml/dataset';
import type { PredictOptions } from '../engines/ml/predict';
import { scoringPool } from '../engines/ml/scoringPool';
import type { ProjectDirectory } from '../shared/projectDirectory';
import type { BlobStore } from '../storage/blobs';
import type { Definition } from './decider';
import type { LlmEngineLookup } from './llmEngines';
import { completeArtifact, predictorCache } from './predictors';
import { describeModel, presentModel, type ModelView } from './present';
import { reportProgress } from './progressReports';
import { modelRowsOfProject } from './projection';
import { modelTrainer, type TrainingRows } from './training';
import {
  llmModelOf,
  loadModel,
  modelView,
  resolveVersion,
  rowOf,
  runModelCommand,
  type ModelReads,
} from './versions';
import {
  createModel,
  finetuneModel,
  removeModel,
  retrainModel,
  updateModelOptions,
  type ModelWriteDeps,
} from './writes';

export const modelsService = (
  ctx: AppContext,
  projects: ProjectDirectory,
  blobs: BlobStore,
  training: TrainingRows,
  instanceId: string,
  /** An ML engine's name and handler (CREATE ML_ENGINE): an LLM model names one as its engine. */
  llmEngines: LlmEngineLookup = async () => undefined,
) => {
  // Large predictions walk their trees on several threads (PREDICTION_THREADS); workers start on first use.
  const pool = scoringPool(ctx.config.predictionThreads);
  const predictorFor = predictorCache(blobs, pool);

  const reads: ModelReads = { ctx, projects };
  const trainer = modelTrainer(ctx, {
    run: (projectName, command) => runModelCommand(reads, projectName, command),
    reportProgress: (projectName, r) => reportProgress(ctx, projects, projectName, r),
    loadVersion: async (projectName, name, version) =>
      (await loadModel(reads, projectName, name))?.versions.get(version),
    blobs,
    rows: training,
    instanceId,
  });

  const writes: ModelWriteDeps = { ctx, projects, training, trainer, llmEngines };
  const view = (projectName: string, ref: string) => modelView(reads, projectName, ref);

  /** The predictor of a complete version: 409 while it trains or after it failed. */
  const predictor = async (projectName: string, ref: string) => {
    const { name, version } = await resolveVersion(reads, projectName, ref);
    return predictorFor(completeArtifact(name, version));
  };

  return {
    list: async (projectName: string) =>
      (await modelRowsOfProject(ctx.duck, (await projects.require(projectName)).id)).map(presentModel),
    get: view,

    create: (
      projectName: string,
      def: { name: string; replace: boolean; ifNotExists: boolean } & Definition,
    ): Promise<ModelView> => createModel(writes, projectName, def),

    retrain: (projectName: string, name: string, def: Partial<Definition>): Promise<ModelView> =>
      retrainModel(writes, projectName, name, def),

    /** FINETUNE: a new version learning from the fine-tuned version's rows plus `def`'s. */
    finetune: (
      projectName: string,
      ref: string,
      def: { query: string; sourceDatabase: string; options: Record<string, unknown> },
    ): Promise<ModelView> => finetuneModel(writes, projectName, ref, def),

    updateOptions: (projectName: string, ref: string, options: Record<string, unknown>) =>
      updateModelOptions(writes, projectName, ref, options),

    remove: (projectName: string, ref: string) => removeModel(writes, projectName, ref),

    exists: async (projectName: string, ref: string) =>
      resolveVersion(reads, projectName, ref).then(
        () => true,
        () => false,
      ),

    predictor,

    /**
     * The LLM model a reference means (its real options, secrets included, from the project's
     * stream), or undefined when it is a trained model. Unknown: 404.
     */
    llmModel: (projectName: string, ref: string) => llmModelOf(reads, projectName, ref),

    predict: async (projectName: string, ref: string, rows: Row[], options: PredictOptions) => {
      const project = await projects.require(projectName);
      const model = await predictor(project.name, ref);
      return model.predictBatch ? model.predictBatch(rows, options) : model.predict(rows, options);
    },

    describe: async (projectName: string, ref: string, attribute?: string) =>
      describeModel(await rowOf(reads, projectName, ref), attribute),

    recoverInterruptedTrainings: trainer.recoverInterrupted,
    /** Stops the scoring pool's workers. */
    close: () => pool.close(),
    idle: trainer.idle,
    trainingsInFlight: trainer.inFlight,
  };
};

export type ModelsService = ReturnType<typeof modelsService>;
