/**
 * The service's program (`src/main.ts`) as one CommonJS file, bundled once per spec file by esbuild
 * (about half a second) and run with node: 0.6 s of CPU to ready against 1.4–1.9 s through tsx's
 * hooks, for a spec that starts the service several times. Packages stay required from
 * node_modules (as dist/ requires them); each module keeps its own `__dirname` and `__filename`,
 * its source's, so what it finds beside its source (the console's build, the ML and catalog
 * workers, run from source as under tsx) it finds as before.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';

const ROOT = path.resolve(__dirname, '../..');

/** `__dirname` and `__filename` of each module that names them: its source's, as tsx gives them. */
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

let made: Promise<string> | undefined;
let dir: string | undefined;
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The bundle of `src/main.ts`, made on first use in this spec file: its path. */
export const bundledMain = (): Promise<string> =>
  (made ??= (async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-main-'));
    const outfile = path.join(dir, 'main.js');
    await build({
      entryPoints: [path.join(ROOT, 'src/main.ts')],
      outfile,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'silent',
      plugins: [sourcePaths],
    });
    return outfile;
  })());
