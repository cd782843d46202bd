import { parseTrainOptions, type TrainOptions } from './options';
import type { OnProgress } from './progress';
import { columnsFromRows, isColumnar, transferables, type TrainingData } from './table';
import type { WorkerInput, WorkerMessage } from './worker';
import { mlWorker } from './workerThread';

export type TrainInWorkerHooks = {
  /** Coarse progress (about twenty calls at most), forwarded from the worker. */
  onProgress?: OnProgress;
  /**
   * Columnar input only: move the typed columns' buffers to the worker instead of copying them
   * (the caller's arrays are then empty). Rows are always converted to fresh columns and moved.
   */
  transfer?: boolean;
};

/**
 * Runs `trainModel` in a worker thread, its options read here and the training there; resolves
 * with the artifact's JSON. `options` may be a seed (the original signature) or the training
 * options. Rows are turned into columns here, so numeric columns cross to the worker as transferred
 * typed arrays rather than cloned objects.
 */
export const trainInWorker = (
  data: TrainingData,
  target: string,
  options: number | TrainOptions = {},
  hooks: TrainInWorkerHooks = {},
): Promise<string> =>
  new Promise((resolve, reject) => {
    const { onProgress: fromOptions, ...rest } = typeof options === 'number' ? { seed: options } : options;
    const onProgress = hooks.onProgress ?? fromOptions;
    let parsed: WorkerInput['options'];
    try {
      parsed = parseTrainOptions(rest);
    } catch (error) {
      // As the worker reported it when it read them: an Error with the message.
      reject(new Error(error instanceof Error ? error.message : String(error)));
      return;
    }
    const columns = isColumnar(data) ? data : columnsFromRows(data);
    const transferList = !isColumnar(data) || hooks.transfer ? transferables(columns) : [];
    const input: WorkerInput = { data: columns, target, options: parsed, progress: onProgress !== undefined };
    const worker = mlWorker('worker', { workerData: input, transferList });
    let settled = false;
    worker.on('message', (m: WorkerMessage) => {
      switch (m.type) {
        case 'progress':
          onProgress?.({ phase: m.phase, done: m.done, total: m.total });
          return;
        case 'done':
          settled = true;
          void worker.terminate();
          resolve(m.json);
          return;
        case 'error':
          settled = true;
          void worker.terminate();
          reject(new Error(m.message));
          return;
        default: {
          const _exhaustive: never = m;
          return _exhaustive;
        }
      }
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled && code !== 0) reject(new Error(`the training worker stopped with code ${code}`));
    });
  });
