import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { settled, type AppContext } from '../context';
import type { BlobStore } from '../files/blobs';
import type { Artifact } from '../ml/artifact';
import type { Row } from '../ml/dataset';
import { makePredictor, type PredictOptions, type Predictor } from '../ml/predict';
import { trainInWorker } from '../ml/runTraining';
import { projectAggregate, projectStream } from '../projects/aggregate';
import type { ProjectsService } from '../projects/service';
import { conflict, invalid, notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { pyRepr } from '../shared/pyrepr';
import { maskSecrets } from '../shared/secrets';
import { toMindsDbTimestamp } from '../shared/time';
import { VERSION } from '../system/routes';
import {
  decideModel,
  findModel,
  splitVersion,
  type Definition,
  type ModelCommand,
  type ModelVersion,
} from './decider';

/** How training rows are fetched: the SQL service runs `query` in `database`. */
export type TrainingRows = { rows(database: string, query: string): Promise<Row[]> };

type ModelRow = {
  ID: bigint;
  NAME: string;
  ENGINE: string;
  PROJECT: string;
  ACTIVE: boolean;
  VERSION: number;
  STATUS: string;
  ACCURACY: number | null;
  PREDICT: string;
  ERROR: string | null;
  SELECT_DATA_QUERY: string;
  TRAINING_OPTIONS: string;
  TAG: string | null;
  CREATED_AT: Date;
  TRAINING_TIME: number | null;
  SOURCE_DATABASE: string;
  COLUMNS: string | null;
  METRIC: string | null;
  ARTIFACT_DIGEST: string | null;
  UPDATE_STATUS: string;
};

/** MindsDB's reduced model dict (GET /models, GET /models/{m}). */
const present = (r: ModelRow) => {
  const options = JSON.parse(r.TRAINING_OPTIONS) as { target: string; using: Record<string, unknown> };
  return {
    id: Number(r.ID),
    name: r.NAME,
    version: r.VERSION,
    is_active: r.ACTIVE,
    predict: r.PREDICT,
    status: r.STATUS,
    problem_definition: options,
    current_phase: r.STATUS,
    accuracy: r.ACCURACY,
    data_source: r.SOURCE_DATABASE,
    update: r.UPDATE_STATUS,
    active: r.ACTIVE,
    mindsdb_version: VERSION,
    error: r.ERROR,
    created_at: toMindsDbTimestamp(r.CREATED_AT).slice(0, 19),
    fetch_data_query: r.SELECT_DATA_QUERY,
    training_time: r.TRAINING_TIME,
    engine: r.ENGINE,
    engine_name: r.ENGINE,
    tag: r.TAG,
  };
};
export type ModelView = ReturnType<typeof present>;

/** The one-row table CREATE MODEL / RETRAIN answer in SQL (MindsDB's columns). */
export const modelTable = (v: ModelView, project: string) => ({
  column_names: [
    'NAME',
    'ENGINE',
    'PROJECT',
    'ACTIVE',
    'VERSION',
    'STATUS',
    'ACCURACY',
    'PREDICT',
    'UPDATE_STATUS',
    'MINDSDB_VERSION',
    'ERROR',
    'SELECT_DATA_QUERY',
    'TRAINING_OPTIONS',
    'TAG',
  ],
  data: [
    [
      v.name,
      v.engine,
      project,
      v.active,
      v.version,
      v.status,
      v.accuracy,
      v.predict,
      v.update,
      v.mindsdb_version,
      v.error,
      v.fetch_data_query,
      JSON.stringify(v.problem_definition),
      v.tag,
    ],
  ],
});

/** MindsDB's answer to a REST CREATE (problem_definition as a Python repr). */
export const createdBody = (v: ModelView) => ({
  name: v.name,
  accuracy: v.accuracy,
  active: v.active,
  version: v.version,
  status: v.status,
  predict: v.predict,
  mindsdb_version: v.mindsdb_version,
  error: v.error,
  fetch_data_query: v.fetch_data_query,
  problem_definition: pyRepr(v.problem_definition),
});

export const instanceIdOf = (dataDir: string) => {
  const file = path.join(dataDir, 'instance-id');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, crypto.randomUUID());
  }
  return fs.readFileSync(file, 'utf8').trim();
};

export const modelsService = (
  ctx: AppContext,
  projects: ProjectsService,
  blobs: BlobStore,
  training: TrainingRows,
  instanceId: string,
) => {
  const predictors = new Map<string, Predictor>();
  const running = new Set<Promise<void>>();

  const run = async (projectName: string, unstamped: Unstamped<ModelCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as ModelCommand;
    const outcome = await ctx.commands.run(projectStream(projectName), projectAggregate, (s) =>
      decideModel(command, s),
    );
    await settled(ctx, outcome.lastPosition);
    return outcome;
  };

  const loadModel = async (projectName: string, name: string) => {
    const { state } = await ctx.commands.load(projectStream(projectName), projectAggregate);
    return findModel(state, name);
  };

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

  const rowsOf = async (projectName: string) => {
    const project = await projects.require(projectName);
    return (await ctx.duck.query('SELECT * FROM models WHERE PROJECT_ID = ? ORDER BY ID, VERSION', [
      BigInt(project.id),
    ])) as ModelRow[];
  };

  /** The projected row of the version a reference means. */
  const rowOf = async (projectName: string, ref: string) => {
    const { name, version } = await resolveVersion(projectName, ref);
    const row = (await rowsOf(projectName)).find(
      (r) => r.NAME.toLowerCase() === name.toLowerCase() && r.VERSION === version.version,
    );
    if (!row) throw notFound(`Model with name ${ref} not found`, 'Model not found');
    return row;
  };

  const view = async (projectName: string, ref: string) => present(await rowOf(projectName, ref));

  const saveArtifact = async (json: string) => {
    const digest = crypto.createHash('sha256').update(json).digest('hex');
    const temp = path.join(ctx.config.dataDir, 'files', 'incoming', `${crypto.randomUUID()}.model`);
    fs.mkdirSync(path.dirname(temp), { recursive: true });
    await fs.promises.writeFile(temp, json);
    await blobs.put(temp, digest, 'model.json');
    return digest;
  };

  /** Trains one version: fetch rows, learn in a worker thread, store the artifact, record the outcome. */
  const train = async (projectName: string, name: string, version: number) => {
    await run(projectName, { type: 'StartTraining', data: { name, version, trainer: instanceId } });
    const started = Date.now();
    try {
      const model = await loadModel(projectName, name);
      const v = model?.versions.get(version);
      if (!v) throw new Error('the model was deleted while training');
      const rows = await training.rows(v.sourceDatabase, v.query);
      const seed = Number(v.options.seed ?? 42);
      const json = await trainInWorker(rows, v.target, Number.isFinite(seed) ? seed : 42);
      const artifact = JSON.parse(json) as Artifact;
      const digest = await saveArtifact(json);
      await run(projectName, {
        type: 'CompleteTraining',
        data: {
          name,
          version,
          artifactDigest: digest,
          accuracy: artifact.training.accuracy,
          metric: artifact.training.metric,
          columns: artifact.columns.map((c) => ({ name: c.name, dtype: c.dtype })),
          rows: artifact.training.rows,
          trainingMs: Date.now() - started,
        },
      });
    } catch (error) {
      const message = (error as { message?: string }).message ?? String(error);
      ctx.logger.warn({ model: `${projectName}.${name}`, version, error: message }, 'training failed');
      await run(projectName, { type: 'FailTraining', data: { name, version, error: message } }).catch(
        () => undefined,
      );
    }
  };

  const launch = async (projectName: string, name: string, version: number, wait: boolean) => {
    const job = train(projectName, name, version);
    running.add(job);
    void job.finally(() => running.delete(job));
    if (wait) await job;
  };

  const predictorFor = async (digest: string) => {
    const cached = predictors.get(digest);
    if (cached) return cached;
    const file = await blobs.ensureLocal(digest, 'model.json');
    const predictor = makePredictor(JSON.parse(await fs.promises.readFile(file, 'utf8')) as Artifact);
    if (predictors.size >= 16) predictors.delete(predictors.keys().next().value as string);
    predictors.set(digest, predictor);
    return predictor;
  };

  const waitFlag = (options: Record<string, unknown>) => {
    const v = options.join_learn_process;
    return v === true || v === 1 || v === 'true' || v === '1';
  };

  return {
    list: async (projectName: string) => (await rowsOf(projectName)).map(present),
    get: view,

    create: async (
      projectName: string,
      def: { name: string; replace: boolean; ifNotExists: boolean } & Definition,
    ): Promise<ModelView> => {
      const project = await projects.require(projectName);
      if (def.ifNotExists && (await loadModel(project.name, def.name))) return view(project.name, def.name);
      const outcome = await run(project.name, { type: 'DefineModel', data: def });
      const defined = outcome.state.models.get(def.name.toLowerCase())!;
      await launch(project.name, defined.name, 1, waitFlag(def.options));
      return view(project.name, `${defined.name}.1`);
    },

    retrain: async (projectName: string, name: string, def: Partial<Definition>): Promise<ModelView> => {
      const project = await projects.require(projectName);
      const outcome = await run(project.name, { type: 'RetrainModel', data: { name, ...def } });
      const model = outcome.state.models.get(name.toLowerCase())!;
      const version = Math.max(...model.versions.keys());
      await launch(project.name, model.name, version, waitFlag(model.versions.get(version)!.options));
      return view(project.name, `${model.name}.${version}`);
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

    exists: async (projectName: string, ref: string) => {
      try {
        await resolveVersion(projectName, ref);
        return true;
      } catch {
        return false;
      }
    },

    /** The predictor of a complete version: 409 while it trains or after it failed. */
    predictor: (projectName: string, ref: string) => modelsPredictor(projectName, ref),

    predict: async (projectName: string, ref: string, rows: Row[], options: PredictOptions) => {
      const project = await projects.require(projectName);
      const predictor = await modelsPredictor(project.name, ref);
      return predictor.predict(rows, options);
    },

    describe: async (projectName: string, ref: string, attribute?: string) => {
      const row = await rowOf(projectName, ref);
      const columns = row.COLUMNS ? (JSON.parse(row.COLUMNS) as { name: string; dtype: string }[]) : [];
      switch (attribute) {
        case undefined:
          return [{ tables: 'info' }, { tables: 'features' }, { tables: 'model' }];
        case 'info':
          return [
            {
              accuracies: { [row.METRIC ?? 'r2']: row.ACCURACY },
              outputs: [row.PREDICT],
              inputs: columns.map((c) => c.name),
              status: row.STATUS,
            },
          ];
        case 'features':
          return [
            ...columns.map((c) => ({ column: c.name, type: c.dtype, role: 'feature' })),
            { column: row.PREDICT, type: 'target', role: 'target' },
          ];
        case 'model':
          return [
            {
              name: 'best of gbdt, linear and baseline (see accuracy)',
              accuracy: row.ACCURACY,
              training_time: row.TRAINING_TIME,
              selected: true,
            },
          ];
        default:
          throw invalid(
            `Unknown attribute ${attribute}: use info, features or model`,
            'ML handler unsupported',
          );
      }
    },

    /** A process that died mid-training leaves its versions in training: mark them failed, with why. */
    recoverInterruptedTrainings: async () => {
      const stuck = (await ctx.duck.query(
        `SELECT PROJECT, NAME, VERSION, STATUS, TRAINER FROM models WHERE STATUS IN ('generating', 'training')`,
      )) as { PROJECT: string; NAME: string; VERSION: number; STATUS: string; TRAINER: string | null }[];
      for (const s of stuck) {
        const ours = s.TRAINER === instanceId || (s.STATUS === 'generating' && ctx.log.soleWriter);
        if (!ours) continue;
        await run(s.PROJECT, {
          type: 'FailTraining',
          data: {
            name: s.NAME,
            version: s.VERSION,
            error: 'training was interrupted: the process training it stopped',
          },
        });
      }
    },

    /** Waits for trainings started by this process (tests, shutdown). */
    idle: async () => {
      while (running.size) await Promise.allSettled([...running]);
    },

    masked: (options: Record<string, unknown>) => maskSecrets(options),
  };

  // Hoisted: used by `predictor` and `predict` above.
  async function modelsPredictor(projectName: string, ref: string) {
    const { name, version } = await resolveVersion(projectName, ref);
    if (version.status !== 'complete' || !version.artifactDigest)
      throw conflict(
        `Model ${name} (version ${version.version}) is ${version.status}: model creation not completed${version.error ? ` (${version.error})` : ''}`,
        'Model not ready',
      );
    return predictorFor(version.artifactDigest);
  }
};

export type ModelsService = ReturnType<typeof modelsService>;
