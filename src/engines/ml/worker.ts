import { parentPort, workerData } from 'node:worker_threads';
import { serializeArtifact } from './artifact';
import type { ParsedTrainOptions } from './options';
import type { ColumnarData } from './table';
import { trainParsed } from './train';

/** What the parent sends (runTraining.ts) and what the worker answers. */
export type WorkerInput = {
  data: ColumnarData;
  target: string;
  /** Read on the main thread (parseTrainOptions): this worker loads no zod. */
  options: ParsedTrainOptions;
  progress: boolean;
};
export type WorkerMessage =
  | {
      type: 'progress';
      phase: 'reading' | 'encoding' | 'training' | 'calibrating';
      done: number;
      total: number;
    }
  | { type: 'done'; json: string }
  | { type: 'error'; message: string };

/** Trains off the event loop: the API keeps answering while a model learns. */
const { data, target, options, progress } = workerData as WorkerInput;
const send = (m: WorkerMessage) => parentPort!.postMessage(m);
try {
  const artifact = trainParsed(
    data,
    target,
    options,
    progress ? (p) => send({ type: 'progress', ...p }) : undefined,
  );
  send({ type: 'done', json: serializeArtifact(artifact) });
} catch (error) {
  send({ type: 'error', message: (error as Error).message });
}
