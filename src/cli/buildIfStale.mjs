// Builds dist/ (tsc and the console's Vite build) only when what it is built from changed since the
// last build: `npm start` on a built tree then starts in seconds instead of spending 36–78 s in tsc
// and Vite every time, and `npm run verify` / `npm run replay` leave a running service's dist/ alone
// unless the sources moved under it. What a build is made from is hashed (content, not mtimes: a
// checkout or a copy changes mtimes without changing a byte) and the hash kept in dist/.build-hash.
// Plain JavaScript: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const STAMP = path.join(root, 'dist', '.build-hash');
/** What the build reads: sources, the console, the compiler's and bundler's settings, the lock file. */
const INPUTS = [
  'src',
  'events',
  'projections',
  'console',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** What the build writes, or what is never read by it. */
const SKIPPED = new Set(['node_modules', 'dist', '.vite']);

const filesUnder = (entry) => {
  const full = path.join(root, entry);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [entry];
  const out = [];
  const pending = [entry];
  while (pending.length > 0) {
    const dir = pending.pop();
    for (const d of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (SKIPPED.has(d.name)) continue;
      const rel = path.join(dir, d.name);
      if (d.isDirectory()) pending.push(rel);
      else if (d.isFile()) out.push(rel);
    }
  }
  return out;
};

const sourceHash = () => {
  const hash = crypto.createHash('sha256');
  for (const file of INPUTS.flatMap(filesUnder).sort()) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
};

const current = sourceHash();
const built = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8').trim() : null;
const complete = ['dist/src/main.js', 'dist/console/index.html'].every((f) =>
  fs.existsSync(path.join(root, f)),
);
if (built === current && complete) process.exit(0);

process.stderr.write(
  built === null
    ? 'building dist/ (first start)\n'
    : 'sources changed since the last build: building dist/\n',
);
const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
fs.writeFileSync(STAMP, `${current}\n`);
