import path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The worker threads of this folder: training (worker.ts) and batch scoring (scoringWorker.ts). */
export type MlWorkerName = 'worker' | 'scoringWorker';

/**
 * A worker thread running this folder's `name`: its built JavaScript in production. From source
 * (tests, tsx) its TypeScript is bundled once per process by esbuild and run as the worker's code:
 * tsx's require hook inside a worker made an esbuild call for each module the worker loaded, 0.5–1 s
 * a start on a busy 2-core machine for a training of ~10 ms, and every test that trains paid it.
 */
export const mlWorker = (name: MlWorkerName, options: WorkerOptions = {}): Worker =>
  __filename.endsWith('.ts')
    ? new Worker(bundled(name), { ...options, eval: true })
    : new Worker(path.join(__dirname, `${name}.js`), options);

const bundles = new Map<MlWorkerName, string>();

const bundled = (name: MlWorkerName): string => {
  const known = bundles.get(name);
  if (known !== undefined) return known;
  // A development dependency: loaded only when running from source, never in a build.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof import('esbuild');
  const built = esbuild.buildSync({
    entryPoints: [path.join(__dirname, `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    sourcemap: 'inline',
    logLevel: 'silent',
    // workerThread.ts itself is in the scoring worker's graph: its lazy require stays a require.
    external: ['esbuild'],
  });
  const code = built.outputFiles[0]!.text;
  bundles.set(name, code);
  return code;
};
