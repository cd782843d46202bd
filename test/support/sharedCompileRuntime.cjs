'use strict';
/**
 * Jest's runtime, compiling each module as a `vm.Script` rather than with `vm.compileFunction`.
 *
 * A jest worker runs spec file after spec file, each in a context of its own, and loads its modules
 * afresh for each: about 1,100 of them for a spec that builds the app. `vm.compileFunction` leaves
 * V8's compilation cache out (nodejs/node#35375, still open), so every file parsed and compiled every
 * module again, and compiled every function it called again. A `vm.Script` with the same source and
 * file name is found in that cache, with the bytecode of the functions earlier files ran, so a
 * worker compiles a module once. Measured on 200 modules of the service's dependencies (duckdb,
 * zod, express, pino), a fresh context's compile took 28–72 ms through `compileFunction` and 5–17 ms
 * through a cached `vm.Script`.
 *
 * What each module sees is unchanged: the same parameters in the same order, the same
 * `importModuleDynamically`, the same file name, and line numbers kept by starting the function on
 * its own line, one line before the module's first (`lineOffset: -1`). Core modules, and a source
 * this way of compiling rejects (its syntax error reported as jest reports it), go to jest's own
 * `compile`.
 */
const vm = require('node:vm');
const JestRuntime = require('jest-runtime').default;

const runtimeSupportsVmModules = typeof vm.SyntheticModule === 'function';

class SharedCompileRuntime extends JestRuntime {
  constructor(...args) {
    super(...args);
    const executor = this.executor;
    // jest-runtime's internals, as of 30.5: a newer jest may move them, and should say so plainly.
    const missing = [
      'compile',
      'injectedModuleParameters',
      'environment',
      'resolution',
      'dynamicImport',
    ].filter((name) => executor?.[name] == null);
    if (missing.length > 0)
      throw new Error(
        `test/support/sharedCompileRuntime.cjs: this jest-runtime's executor has no ${missing.join(', ')}; update the file or remove it from jest.config.js`,
      );
    const jestCompile = executor.compile.bind(executor);
    const header = `(function (${executor.injectedModuleParameters.join(', ')}) {\n`;
    executor.compile = (source, filename) => {
      const context = executor.environment.getVmContext();
      if (context == null) return null;
      if (executor.resolution.isCoreModule(filename)) return jestCompile(source, filename);
      let script;
      try {
        script = new vm.Script(`${header}${source}\n})`, {
          filename,
          lineOffset: -1,
          importModuleDynamically: (specifier, _script, importAttributes, phase) => {
            if (!runtimeSupportsVmModules) {
              throw new Error(
                'You need to run with a version of node that supports ES Modules in the VM API. See https://jestjs.io/docs/ecmascript-modules',
              );
            }
            return executor.dynamicImport(specifier, filename, context, importAttributes, phase);
          },
        });
      } catch {
        return jestCompile(source, filename);
      }
      return script.runInContext(context);
    };
  }
}

module.exports = SharedCompileRuntime;
