import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Row } from './dataset';

/** Runs `trainModel` in a worker thread; resolves with the artifact's JSON. */
export const trainInWorker = (rows: Row[], target: string, seed: number): Promise<string> =>
  new Promise((resolve, reject) => {
    // From source (tests, tsx) the worker is TypeScript: a two-line bootstrap registers tsx's
    // require hook first. Built, it is plain JavaScript.
    const fromSource = __filename.endsWith('.ts');
    const file = path.join(__dirname, fromSource ? 'worker.ts' : 'worker.js');
    const worker = fromSource
      ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(file)});`, {
          eval: true,
          workerData: { rows, target, seed },
        })
      : new Worker(file, { workerData: { rows, target, seed } });
    worker.once('message', (m: { ok: boolean; json?: string; error?: string }) => {
      void worker.terminate();
      if (m.ok) resolve(m.json!);
      else reject(new Error(m.error));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the training worker stopped with code ${code}`));
    });
  });
