import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import type * as Peggy from 'peggy';

type CompiledParser = { parse: (input: string) => unknown };

/**
 * Where compiled grammars are kept: `node_modules/.cache/mindledger/` (the convention babel, eslint
 * and webpack follow), beside the peggy that compiled them.
 */
const cacheDir = () =>
  path.join(path.dirname(require.resolve('peggy/package.json')), '..', '.cache', 'mindledger');

/**
 * A peggy parser for `grammar`, compiled once per grammar text and peggy version and then loaded
 * from the cache: compiling this grammar takes about 250 ms of a process's start (and of every
 * spec file's, as jest loads modules afresh per file); loading the compiled source, about 15 ms.
 * The cache is only a shortcut: a file it cannot read or write (a read-only install) means
 * compiling in memory, and a changed grammar has a different name.
 */
export const compiledParser = (grammar: string, dir = cacheDir()): CompiledParser => {
  // peggy itself (30 modules) is loaded only to compile.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const peggyVersion = (require('peggy/package.json') as { version: string }).version;
  const key = crypto.createHash('sha256').update(`${peggyVersion}\n${grammar}`).digest('hex').slice(0, 24);
  const file = path.join(dir, `sql-parser-${key}.js`);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (fs.existsSync(file)) return require(file) as CompiledParser;
  } catch {
    // An unreadable or torn file: compiled below, and written again.
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const peggy = require('peggy') as typeof Peggy;
  const source = peggy.generate(grammar, { output: 'source', format: 'commonjs' });
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Written whole, then renamed: processes starting together never load half a file.
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(partial, source);
    fs.renameSync(partial, file);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(file) as CompiledParser;
  } catch {
    // Not written: the source just compiled is loaded from memory (not compiled a second time).
    const module = { exports: {} as CompiledParser };
    (vm.runInThisContext(`(function (module, exports) {${source}\n})`) as (m: object, e: object) => void)(
      module,
      module.exports,
    );
    return module.exports;
  }
};
