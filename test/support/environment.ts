/**
 * Jest's Node environment, which also releases the AsyncLocalStorage instances a spec file used.
 *
 * Node keeps every enabled AsyncLocalStorage in one list per process and calls each of them for
 * every promise and async resource created anywhere in the process. The service makes a handful
 * (the request context, one per DuckDB…) once, in production. A jest worker runs file after file
 * and loads the modules afresh for each, so every file and every app added instances that stayed
 * enabled after the file ended, and late files paid for all earlier ones on every promise
 * (`_propagate` was 15% of the busy time of a process that ran 24 spec files). Disabling an
 * instance once its file is over frees it: nothing of that file runs afterwards.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TestEnvironment } from 'jest-environment-node';

const USED = Symbol.for('mindledger.test.usedAsyncLocalStorages');

type Tracked = { [USED]?: Set<AsyncLocalStorage<unknown>> };
const prototype = AsyncLocalStorage.prototype as AsyncLocalStorage<unknown> & Tracked;

/** Instances that entered a context since the last file ended (`run` and `enterWith` enable one). */
const usedStorages = (): Set<AsyncLocalStorage<unknown>> => {
  // The environment module may be loaded once per file; the prototype is the process's.
  const found = prototype[USED];
  if (found) return found;
  const used = new Set<AsyncLocalStorage<unknown>>();
  const { run, enterWith } = prototype;
  Object.defineProperty(prototype, USED, { value: used });
  prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
    used.add(this);
    return run.apply(this, args);
  } as typeof run;
  prototype.enterWith = function (this: AsyncLocalStorage<unknown>, store: unknown) {
    used.add(this);
    enterWith.call(this, store);
  };
  return used;
};

export default class ReleasingEnvironment extends TestEnvironment {
  override async setup() {
    usedStorages();
    await super.setup();
  }

  override async teardown() {
    const used = usedStorages();
    for (const storage of used) storage.disable();
    used.clear();
    await super.teardown();
  }
}
