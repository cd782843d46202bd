/**
 * A program of the service (`src/main.ts`, `src/cli/*.ts`) as compiled JavaScript, run as `npm
 * start` and `npm run <it>` run them from dist/: bundled once per spec file by esbuild from its
 * source and what it imports (0.05–0.5 s; packages stay required from node_modules, as dist/
 * requires them), so no tsc build is needed. Through tsx instead, each run resolved and loaded the
 * program's modules through tsx's hooks with a cold cache (each jest run has a fresh TMPDIR): a CLI
 * run cost 0.65–0.95 s of CPU against 0.35–0.45 s bundled, a service start 1.4–1.9 s to ready
 * against 0.6 s (the ML worker is bundled from source the same way, src/engines/ml/workerThread.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Each module that names `__dirname` or `__filename` keeps its source's, as tsx gives them: what it
 * finds beside its source (the console's build, the ML and catalog workers, run from source as
 * under tsx) it finds as before.
 */
const sourcePaths: Plugin = {
  name: 'source-paths',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined;
      const own = `const __dirname = ${JSON.stringify(path.dirname(args.path))}; const __filename = ${JSON.stringify(args.path)};\n`;
      return { contents: own + text, loader: 'ts' };
    });
  },
};

/**
 * Bundles made by this spec file, by source (`src/cli/verify.ts`), removed when it ends. They are
 * written inside the checkout (node_modules/.cache), so the packages they require resolve to the
 * checkout's as from dist/, with nothing set in the program's environment.
 */
const bundles = new Map<string, Promise<string>>();
let dir: string | undefined;
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The bundle of `source` (relative to the checkout), made on its first use in this spec file: its path. */
export const bundled = (source: string): Promise<string> => {
  let made = bundles.get(source);
  if (!made) {
    if (!dir) {
      const cache = path.join(ROOT, 'node_modules', '.cache');
      fs.mkdirSync(cache, { recursive: true });
      dir = fs.mkdtempSync(path.join(cache, 'mindledger-bundles-'));
    }
    const into = dir;
    const outfile = path.join(into, `${source.replace(/[^A-Za-z0-9]+/g, '_')}.js`);
    made = build({
      entryPoints: [path.join(ROOT, source)],
      outfile,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'silent',
      plugins: [sourcePaths],
    }).then(() => outfile);
    bundles.set(source, made);
  }
  return made;
};

/**
 * Runs the program at `source` (relative to the checkout) with `args`, `env` added to this
 * process's environment and `stdin` as its input, from the checkout: its exit code and what it
 * wrote (a failed run's too).
 */
export const runCli = async (source: string, args: string[], env: Record<string, string>, stdin = '') => {
  const program = await bundled(source);
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [program, ...args],
      { cwd: ROOT, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error.code as number | null) ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
};
