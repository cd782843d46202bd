/**
 * A command-line program of the service (`src/cli/*.ts`) as compiled JavaScript, run as
 * `npm run <it>` runs it from dist/: bundled once per spec file by esbuild from its source and what
 * it imports (about 50 ms; packages stay required from node_modules, as dist/ requires them), so no
 * tsc build is needed. Through tsx instead, each run resolved and loaded the program's modules
 * through tsx's hooks with a cold cache (each jest run has a fresh TMPDIR): 0.65–0.95 s of CPU a
 * run against 0.35–0.45 s for the bundle (the ML worker is bundled from source the same way,
 * src/engines/ml/workerThread.ts). Only for programs that read no file beside their own source
 * (`src/main.ts` does: the console's files, the ML worker, the shadow catalog's process).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/** Bundles made by this spec file, by source (`src/cli/verify.ts`), removed when it ends. */
const bundles = new Map<string, Promise<string>>();
let dir: string | undefined;
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const bundled = (source: string) => {
  let made = bundles.get(source);
  if (!made) {
    const into = (dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-cli-')));
    const outfile = path.join(into, `${path.basename(source, '.ts')}.js`);
    made = build({
      entryPoints: [path.join(ROOT, source)],
      outfile,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'silent',
    }).then(() => outfile);
    bundles.set(source, made);
  }
  return made;
};

/**
 * Runs the program at `source` (relative to the checkout) with `args` and `env` added to this
 * process's environment, from the checkout: its exit code and what it wrote (a failed run's too).
 */
export const runCli = async (source: string, args: string[], env: Record<string, string>) => {
  const program = await bundled(source);
  try {
    const { stdout, stderr } = await run(process.execPath, [program, ...args], {
      cwd: ROOT,
      // The bundle lives outside the checkout: its packages are the checkout's.
      env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules'), ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};
