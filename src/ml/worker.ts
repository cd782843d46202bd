import { parentPort, workerData } from 'node:worker_threads';
import { serializeArtifact } from './artifact';
import type { Row } from './dataset';
import { trainModel } from './train';

/** Trains off the event loop: the API keeps answering while a model learns. */
const { rows, target, seed } = workerData as { rows: Row[]; target: string; seed: number };
try {
  parentPort!.postMessage({ ok: true, json: serializeArtifact(trainModel(rows, target, { seed })) });
} catch (error) {
  parentPort!.postMessage({ ok: false, error: (error as Error).message });
}
