import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../context';
import type { Artifact } from '../engines/ml/artifact';
import { describeColumns, describeTarget } from '../engines/ml/describe';
import type { TrainingProgress } from '../engines/ml/progress';
import { trainInWorker } from '../engines/ml/runTraining';
import { columnsFromTables, rowCount, type ColumnarData } from '../engines/ml/table';
import type { RowTable } from '../shared/sqlAnswers';
import type { BlobStore } from '../storage/blobs';
import type { Unstamped } from '../shared/params';
import { currentRequest } from '../shared/requestContext';
import type { ModelCommand, ReportTrainingProgress } from './decider';
import { trainOptionsOf } from './options';
import { unfinishedVersions } from './projection';
import { trainingDataOf, type ModelVersion } from './state';

/**
 * How training rows are fetched: the SQL service runs `query` in `database`. `readable` refuses,
 * before anything is recorded, a query the caller may not run (training reads later, as the caller).
 */
export type TrainingRows = {
  table(database: string, query: string): Promise<RowTable>;
  readable?(database: string, query: string): Promise<void>;
};

type RunCommand = (projectName: string, command: Unstamped<ModelCommand>) => Promise<unknown>;
type LoadVersion = (projectName: string, name: string, version: number) => Promise<ModelVersion | undefined>;
/** One progress report of a training, for its own stream. */
export type ProgressReport = { name: string; version: number; versionId: bigint } & Pick<
  ReportTrainingProgress['data'],
  'phase' | 'percent' | 'rows'
>;
type ReportProgress = (projectName: string, report: ProgressReport) => Promise<unknown>;

/** This process's identity in `ModelTrainingStarted.trainer`, kept across restarts in DATA_DIR. */
export const instanceIdOf = (dataDir: string) => {
  const file = path.join(dataDir, 'instance-id');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, crypto.randomUUID());
  }
  return fs.readFileSync(file, 'utf8').trim();
};

/** What trainings run on: the project's stream, the versions' settings, rows and artifact store. */
type TrainerDeps = {
  run: RunCommand;
  reportProgress: ReportProgress;
  loadVersion: LoadVersion;
  blobs: BlobStore;
  rows: TrainingRows;
  instanceId: string;
};

const saveArtifact = async (ctx: AppContext, blobs: BlobStore, json: string) => {
  const digest = crypto.createHash('sha256').update(json).digest('hex');
  const temp = path.join(ctx.config.dataDir, 'files', 'incoming', `${crypto.randomUUID()}.model`);
  fs.mkdirSync(path.dirname(temp), { recursive: true });
  await fs.promises.writeFile(temp, json);
  await blobs.put(temp, digest, 'model.json');
  return digest;
};

/**
 * A version's training rows, as columns. A fine-tuned version reads its prior data again, then its
 * own rows: it learns from both. The rows are turned into columns here, so that they are garbage
 * before the training starts rather than held beside it while the worker learns (1M rows of 10
 * columns: about 300 MiB as objects, against 80 MiB of columns moved to the worker), and an idle
 * process gives them back (src/shared/heapKeeper.ts).
 */
const trainingColumns = async (rows: TrainingRows, version: ModelVersion): Promise<ColumnarData> => {
  const tables: RowTable[] = [];
  for (const data of trainingDataOf(version)) tables.push(await rows.table(data.sourceDatabase, data.query));
  return columnsFromTables(tables);
};

/**
 * Trains one version: fetch rows, learn in a worker thread, store the artifact, record the outcome.
 * Each step is logged with the id of the request that started the training (it runs in that
 * request's context), so an operator can follow one training from the access log to its end.
 */
const trainVersion = async (
  ctx: AppContext,
  deps: TrainerDeps,
  projectName: string,
  name: string,
  version: number,
) => {
  await deps.run(projectName, { type: 'StartTraining', data: { name, version, trainer: deps.instanceId } });
  const started = Date.now();
  const about = { reqId: currentRequest()?.requestId, model: `${projectName}.${name}`, version };
  ctx.logger.info(about, 'training started');
  // Progress reports are appended in order behind the training; its outcome is recorded after the
  // last of them, so a waiting caller's answer (its X-Log-Position) and `idle` cover them all.
  let reports = Promise.resolve();
  try {
    const v = await deps.loadVersion(projectName, name, version);
    if (!v) throw new Error('the model was deleted while training');
    const columns = await trainingColumns(deps.rows, v);
    const rows = rowCount(columns);
    ctx.logger.info({ ...about, rows, ms: Date.now() - started }, 'training rows read');
    // The engine reports about twenty times at most; each report is one event, appended in order
    // (a failed append is logged and the training goes on: progress is a view, not the outcome).
    // The log gets a line per phase, not per report.
    let loggedPhase: TrainingProgress['phase'] | null = null;
    const onProgress = ({ phase, done }: TrainingProgress) => {
      if (phase !== loggedPhase) {
        loggedPhase = phase;
        ctx.logger.info({ ...about, phase, percent: done, ms: Date.now() - started }, 'training phase');
      }
      reports = reports.then(() =>
        deps
          .reportProgress(projectName, {
            name,
            version,
            versionId: v.id,
            phase,
            percent: done,
            rows,
          })
          .then(
            () => undefined,
            (error: Error) => ctx.logger.warn({ ...about, error: error.message }, 'progress not recorded'),
          ),
      );
    };
    const json = await trainInWorker(columns, v.target, trainOptionsOf(v.options, v.timeseries), {
      onProgress,
      transfer: true,
    });
    await reports;
    const artifact = JSON.parse(json) as Artifact;
    const digest = await saveArtifact(ctx, deps.blobs, json);
    const trainingMs = Date.now() - started;
    await deps.run(projectName, {
      type: 'CompleteTraining',
      data: {
        name,
        version,
        artifactDigest: digest,
        accuracy: artifact.training.accuracy,
        metric: artifact.training.metric,
        columns: describeColumns(artifact),
        rows: artifact.training.rows,
        trainingMs,
        ...describeTarget(artifact),
      },
    });
    ctx.logger.info(
      {
        ...about,
        rows: artifact.training.rows,
        accuracy: artifact.training.accuracy,
        metric: artifact.training.metric,
        ms: trainingMs,
      },
      'training completed',
    );
  } catch (error) {
    const message = (error as { message?: string }).message ?? String(error);
    ctx.logger.warn({ ...about, error: message, ms: Date.now() - started }, 'training failed');
    await reports;
    await deps
      .run(projectName, { type: 'FailTraining', data: { name, version, error: message } })
      .catch(() => undefined);
  }
};

/**
 * The training lifecycle of model versions: started → trained (artifact stored, digest recorded) or
 * failed (with why), each step an event; trainings run in a worker thread, off the event loop.
 */
export const modelTrainer = (ctx: AppContext, deps: TrainerDeps) => {
  const running = new Set<Promise<void>>();

  const train = (projectName: string, name: string, version: number) =>
    trainVersion(ctx, deps, projectName, name, version);

  return {
    /** Starts training a version; with `wait`, answers once it has completed or failed. */
    launch: async (projectName: string, name: string, version: number, wait: boolean) => {
      const job = train(projectName, name, version);
      running.add(job);
      // A version dropped (on any node) between its definition and its start rejects here; a caller
      // that waits hears it, and a training nobody waits for is logged, never an unhandled rejection
      // (which ends the process).
      void job
        .catch((error: unknown) => {
          if (!wait)
            ctx.logger.warn(
              {
                reqId: currentRequest()?.requestId,
                model: `${projectName}.${name}`,
                version,
                error: (error as { message?: string }).message,
              },
              'training not started',
            );
        })
        .finally(() => running.delete(job));
      if (wait) await job;
    },

    /** A process that died mid-training leaves its versions in training: mark them failed, with why. */
    recoverInterrupted: async () => {
      for (const s of await unfinishedVersions(ctx.duck)) {
        const ours = s.TRAINER === deps.instanceId || (s.STATUS === 'generating' && ctx.log.soleWriter);
        if (!ours) continue;
        await deps.run(s.PROJECT, {
          type: 'FailTraining',
          data: {
            name: s.NAME,
            version: s.VERSION,
            error: 'training was interrupted: the process training it stopped',
          },
        });
      }
    },

    /** Trainings this process is running now (GET /api/metrics). */
    inFlight: () => running.size,

    /** Waits for trainings started by this process (tests, shutdown). */
    idle: async () => {
      while (running.size) await Promise.allSettled([...running]);
    },
  };
};
