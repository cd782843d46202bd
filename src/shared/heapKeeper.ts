import v8 from 'node:v8';
import vm from 'node:vm';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from 'pino';

const MIB = 2 ** 20;

/** V8's full collection, once taken for the process (see `fullCollection`). */
let collector: (() => void) | undefined;

/**
 * V8's full collection, without starting Node with `--expose-gc`: the flag set at run time exposes
 * `gc` to contexts made after it, and one is made to take it (Node's `v8.setFlagsFromString`).
 * Taken once per process, not per app: V8's flags are changed once, at the first app's start, and
 * not set back (changing them while V8 runs is what Node leaves undefined; a second change is not
 * worth a `gc` global fewer in later contexts).
 */
export const fullCollection = (): (() => void) => {
  if (collector) return collector;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return (collector = exposed);
  v8.setFlagsFromString('--expose-gc');
  collector = vm.runInNewContext('gc') as () => void;
  return collector;
};

export type HeapKeeperOptions = {
  /** How often the keeper looks. */
  readonly everyMs: number;
  /**
   * The event loop's utilization since the last look under which the process counts as idle: the
   * idle service measured 0.04–0.07 on a loaded 2-core machine (its own timers), and a threshold of
   * 0.05 held a collection back for 38 s after a training.
   */
  readonly idleBelow?: number;
  /**
   * Growth of the heap past which an idle process collects: this many times its size after the
   * last collection… (2 missed a training's 345 MiB heap once an earlier collection, after a large
   * answer filled the caches, had set the floor at 200 MiB)
   */
  readonly growth?: number;
  /** …and at least this many bytes more. */
  readonly minimumBytes?: number;
  readonly logger?: Logger;
  /** The collection asked for (V8's full collection; a spec passes its own). */
  readonly collect?: () => void;
};

/**
 * Gives memory back once heavy work is over. V8 collects its old generation when the heap reaches
 * a limit set from its last peak, so after one heavy piece of work an idle process allocates too
 * little to reach it and keeps the garbage, and the resident memory under it, until the next heavy
 * work. Measured (issue 62, goal 6): after a 1M-row training (its rows read as objects, about
 * 600 MiB of heap), the service sat at 808 MiB for a minute against 208 MiB idle before, the
 * garbage uncollected; one full collection took it to 179 MiB.
 *
 * Every `everyMs`, when the event loop was nearly idle since the last look and the heap has grown
 * past `growth` times its size after the keeper's last collection (or at start) and `minimumBytes`
 * above it, the keeper asks for one full collection. A process whose heap holds live data stays
 * large, and that size becomes the new floor: it does not collect again until it grows again. Busy,
 * it leaves the heap to V8.
 */
export const heapKeeper = (options: HeapKeeperOptions) => {
  const idleBelow = options.idleBelow ?? 0.15;
  const growth = options.growth ?? 1.5;
  const minimumBytes = options.minimumBytes ?? 128 * MIB;
  const collect = options.collect ?? fullCollection();
  const heapSize = () => v8.getHeapStatistics().total_heap_size;
  let floor = heapSize();
  let loop: EventLoopUtilization = performance.eventLoopUtilization();
  let collections = 0;

  const look = () => {
    const since = performance.eventLoopUtilization(loop);
    loop = performance.eventLoopUtilization();
    const size = heapSize();
    if (since.utilization >= idleBelow || size < floor * growth || size - floor < minimumBytes) return;
    const started = performance.now();
    try {
      collect();
    } finally {
      // Failed too: the keeper asks again only once the heap grows again, not at every look.
      floor = heapSize();
    }
    collections++;
    options.logger?.info(
      {
        heapBeforeMiB: Math.round(size / MIB),
        heapAfterMiB: Math.round(floor / MIB),
        ms: Math.round(performance.now() - started),
      },
      'idle: heap collected',
    );
  };
  // A timer's callback that throws ends the process: a collection that fails is logged, once.
  const lookSafely = () => {
    try {
      look();
    } catch (error) {
      options.logger?.warn({ err: error }, 'idle: heap collection failed');
    }
  };
  // Unref'd: the keeper never keeps a process alive that has stopped everything else.
  const timer = setInterval(lookSafely, options.everyMs).unref();
  return {
    /** Full collections the keeper has asked for. */
    get collections() {
      return collections;
    },
    stop: () => clearInterval(timer),
  };
};
