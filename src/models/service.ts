import fs from 'node:fs';
import { answeredAhead, type AppContext } from '../context';
import type { Artifact } from '../ml/artifact';
import type { Row } from '../ml/dataset';
import { makePredictor, type PredictOptions, type Predictor } from '../ml/predict';
import { scoringPool } from '../ml/scoringPool';
import { projectCommand } from '../projectCommand';
import { projectAggregate } from '../projects/aggregate';
import type { ProjectDirectory } from '../projects/directory';
import { projectStream } from '../projects/state';
import type { BlobStore } from '../storage/blobs';
import { conflict, invalid, notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { LLM_HANDLERS } from '../mlEngines/state';
import {
  decideModel,
  decideTrainingProgress,
  ENGINES,
  type Definition,
  type LlmEngineRef,
  type ModelCommand,
} from './decider';
import { describeModel, presentModel, type ModelView } from './present';
import { modelRowsOfProject, modelVersionRow } from './projection';
import {
  findModel,
  modelTrainingStream,
  splitVersion,
  trainingProgressAggregate,
  type ModelVersion,
} from './state';
import { modelTrainer, type ProgressReport, type TrainingRows } from './training';

export const modelsService = (
  ctx: AppContext,
  projects: ProjectDirectory,
  blobs: BlobStore,
  training: TrainingRows,
  instanceId: string,
  /** An ML engine's name and handler (CREATE ML_ENGINE): an LLM model names one as its engine. */
  llmEngines: (name: string) => Promise<{ name: string; handler: string } | undefined> = async () =>
    undefined,
) => {
  const predictors = new Map<string, Predictor>();
  // Large predictions walk their trees on several threads (PREDICTION_THREADS); workers start on first use.
  const pool = scoringPool(ctx.config.predictionThreads);

  /**
   * The LLM engine a model's `engine` option names: an ML engine made FROM an LLM handler, or an
   * LLM handler itself (`engine = 'openai'`: the server's defaults). Undefined: a trained model's.
   */
  const llmEngineOf = async (engine: unknown): Promise<LlmEngineRef | undefined> => {
    if (typeof engine !== 'string' || engine.trim() === '') return undefined;
    const name = engine.trim().toLowerCase();
    const isLlmHandler = (h: string) => (LLM_HANDLERS as readonly string[]).includes(h.toLowerCase());
    const found = await llmEngines(name);
    // A handler's name alone (`engine = 'openai'`) is no engine: CREATE ML_ENGINE makes one (with no
    // key, it calls through the server's OPENAI_BASE_URL and OPENAI_API_KEY).
    return found && isLlmHandler(found.handler)
      ? { name: found.name, handler: found.handler.toLowerCase() }
      : undefined;
  };

  const run = (projectName: string, command: Unstamped<ModelCommand>) =>
    projectCommand(ctx, { project: projectName, command, decide: decideModel, answer: 'settled' });

  const loadModel = async (projectName: string, name: string) => {
    const { state } = await ctx.commands.load(projectStream(projectName), projectAggregate);
    return findModel(state.models, name);
  };

  /** A progress report, on the training's own stream; nothing waits for the read model. */
  const reportProgress = async (projectName: string, r: ProgressReport) => {
    const project = await projects.require(projectName);
    const command = {
      type: 'ReportTrainingProgress' as const,
      data: {
        projectId: Number(project.id),
        project: project.name,
        name: r.name,
        version: r.version,
        versionId: Number(r.versionId),
        phase: r.phase,
        percent: r.percent,
        rows: r.rows,
      },
      metadata: { now: ctx.clock() },
    };
    const outcome = await ctx.commands.run(modelTrainingStream(r.versionId), trainingProgressAggregate, (s) =>
      decideTrainingProgress(command, s),
    );
    // Nobody waits for a progress report, and on one node nothing else tells the read model of
    // it: noted as a write answered ahead, it is applied now (and a read of the model waits for it),
    // so the models table and DESCRIBE … .progress move while the model trains.
    answeredAhead(ctx, outcome.events);
    return outcome;
  };

  const trainer = modelTrainer(ctx, {
    run,
    reportProgress,
    loadVersion: async (projectName, name, version) =>
      (await loadModel(projectName, name))?.versions.get(version),
    blobs,
    rows: training,
    instanceId,
  });

  /** The version a reference means: `m.N`, or the active one, or the newest. */
  const resolveVersion = async (
    projectName: string,
    ref: string,
  ): Promise<{ name: string; version: ModelVersion }> => {
    const { name, version } = splitVersion(ref);
    const model =
      (await loadModel(projectName, name)) ??
      (version === undefined ? undefined : await loadModel(projectName, ref));
    if (!model) throw notFound(`Model with name ${ref} not found`, 'Model not found');
    const wanted =
      model.name.toLowerCase() === ref.toLowerCase() || version === undefined
        ? (model.activeVersion ?? Math.max(...model.versions.keys()))
        : version;
    const v = model.versions.get(wanted);
    if (!v) throw notFound(`Model ${model.name} has no version ${wanted}`, 'Model not found');
    return { name: model.name, version: v };
  };

  const rowsOf = async (projectName: string) =>
    modelRowsOfProject(ctx.duck, (await projects.require(projectName)).id);

  /** The projected row of the version a reference means. */
  const rowOf = async (projectName: string, ref: string) => {
    const { name, version } = await resolveVersion(projectName, ref);
    const project = await projects.require(projectName);
    const row = await modelVersionRow(ctx.duck, project.id, name, version.version);
    if (!row) throw notFound(`Model with name ${ref} not found`, 'Model not found');
    return row;
  };

  const view = async (projectName: string, ref: string) => presentModel(await rowOf(projectName, ref));

  const predictorFor = async (digest: string) => {
    const cached = predictors.get(digest);
    if (cached) return cached;
    const file = await blobs.ensureLocal(digest, 'model.json');
    const predictor = makePredictor(JSON.parse(await fs.promises.readFile(file, 'utf8')) as Artifact, pool);
    if (predictors.size >= 16) predictors.delete(predictors.keys().next().value as string);
    predictors.set(digest, predictor);
    return predictor;
  };

  /** The predictor of a complete version: 409 while it trains or after it failed. */
  const predictor = async (projectName: string, ref: string) => {
    const { name, version } = await resolveVersion(projectName, ref);
    if (version.status !== 'complete' || !version.artifactDigest)
      throw conflict(
        `Model ${name} (version ${version.version}) is ${version.status}: model creation not completed${version.error ? ` (${version.error})` : ''}`,
        'Model not ready',
      );
    return predictorFor(version.artifactDigest);
  };

  const waitFlag = (options: Record<string, unknown>) => {
    const v = options.join_learn_process;
    return v === true || v === 1 || v === 'true' || v === '1';
  };

  return {
    list: async (projectName: string) => (await rowsOf(projectName)).map(presentModel),
    get: view,

    create: async (
      projectName: string,
      def: { name: string; replace: boolean; ifNotExists: boolean } & Definition,
    ): Promise<ModelView> => {
      const project = await projects.require(projectName);
      if (def.ifNotExists && (await loadModel(project.name, def.name))) return view(project.name, def.name);
      const llmEngine = await llmEngineOf(def.options.engine);
      const trained = ENGINES.includes(String(def.options.engine ?? 'lightwood').toLowerCase());
      // Without rows, an engine that learns from them is refused here; an unknown one is 404 below.
      if (!llmEngine && trained && def.query.trim() === '')
        throw invalid(
          `CREATE MODEL needs FROM <database> (SELECT …): engine ${String(def.options.engine ?? 'lightwood')} learns from rows (an LLM model names an engine made FROM openai, ollama, …)`,
        );
      if (def.query.trim() !== '') await training.readable?.(def.sourceDatabase, def.query);
      const outcome = await run(project.name, {
        type: 'DefineModel',
        data: { ...def, ...(llmEngine ? { llmEngine } : {}) },
      });
      const defined = findModel(outcome.state.models, def.name)!;
      // An LLM model is ready as defined: nothing to train.
      if (!defined.versions.get(1)?.llm)
        await trainer.launch(project.name, defined.name, 1, waitFlag(def.options));
      return view(project.name, `${defined.name}.1`);
    },

    retrain: async (projectName: string, name: string, def: Partial<Definition>): Promise<ModelView> => {
      const project = await projects.require(projectName);
      const before = await loadModel(project.name, name);
      const from = before?.versions.get(before.activeVersion ?? Math.max(...before.versions.keys()));
      const llmEngine = from ? await llmEngineOf(def.options?.engine ?? from.engine) : undefined;
      if (def.query?.trim() && def.sourceDatabase) await training.readable?.(def.sourceDatabase, def.query);
      const outcome = await run(project.name, {
        type: 'RetrainModel',
        data: { name, ...def, ...(llmEngine ? { llmEngine } : {}) },
      });
      const model = findModel(outcome.state.models, name)!;
      const version = Math.max(...model.versions.keys());
      if (!model.versions.get(version)!.llm)
        await trainer.launch(
          project.name,
          model.name,
          version,
          waitFlag(model.versions.get(version)!.options),
        );
      return view(project.name, `${model.name}.${version}`);
    },

    /** FINETUNE: a new version learning from the fine-tuned version's rows plus `def`'s. */
    finetune: async (
      projectName: string,
      ref: string,
      def: { query: string; sourceDatabase: string; options: Record<string, unknown> },
    ): Promise<ModelView> => {
      const project = await projects.require(projectName);
      const whole = await loadModel(project.name, ref);
      const { name, version } = whole ? { name: ref, version: undefined } : splitVersion(ref);
      await training.readable?.(def.sourceDatabase, def.query);
      const outcome = await run(project.name, { type: 'FinetuneModel', data: { name, version, ...def } });
      const model = findModel(outcome.state.models, name)!;
      const tuned = Math.max(...model.versions.keys());
      await trainer.launch(project.name, model.name, tuned, waitFlag(model.versions.get(tuned)!.options));
      return view(project.name, `${model.name}.${tuned}`);
    },

    updateOptions: async (projectName: string, ref: string, options: Record<string, unknown>) => {
      const project = await projects.require(projectName);
      const { name, version } = splitVersion(ref);
      await run(project.name, { type: 'UpdateModelOptions', data: { name, version, options } });
      return view(project.name, ref);
    },

    remove: async (projectName: string, ref: string) => {
      const project = await projects.require(projectName);
      const whole = await loadModel(project.name, ref);
      const { name, version } = whole ? { name: ref, version: undefined } : splitVersion(ref);
      await run(project.name, { type: 'DeleteModel', data: { name, version } });
    },

    exists: async (projectName: string, ref: string) =>
      resolveVersion(projectName, ref).then(
        () => true,
        () => false,
      ),

    predictor,

    /**
     * The LLM model a reference means (its real options, secrets included, from the project's
     * stream), or undefined when it is a trained model. Unknown: 404.
     */
    llmModel: async (projectName: string, ref: string) => {
      const project = await projects.require(projectName);
      const { name, version } = await resolveVersion(project.name, ref);
      if (!version.llm) return undefined;
      return {
        project: project.name,
        name,
        version: version.version,
        target: version.target,
        options: version.options,
        llm: version.llm,
      };
    },

    predict: async (projectName: string, ref: string, rows: Row[], options: PredictOptions) => {
      const project = await projects.require(projectName);
      const model = await predictor(project.name, ref);
      return model.predictBatch ? model.predictBatch(rows, options) : model.predict(rows, options);
    },

    describe: async (projectName: string, ref: string, attribute?: string) =>
      describeModel(await rowOf(projectName, ref), attribute),

    recoverInterruptedTrainings: trainer.recoverInterrupted,
    /** Stops the scoring pool's workers. */
    close: () => pool.close(),
    idle: trainer.idle,
    trainingsInFlight: trainer.inFlight,
  };
};

export type ModelsService = ReturnType<typeof modelsService>;
