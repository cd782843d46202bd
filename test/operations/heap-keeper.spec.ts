import v8 from 'node:v8';
import type { Logger } from 'pino';
import { fullCollection, heapKeeper } from '../../src/shared/heapKeeper';
import { until } from '../support/until';

const MIB = 2 ** 20;
const heapSize = () => v8.getHeapStatistics().total_heap_size;

/**
 * Enough to about double this worker's heap (a spec file's worker holds what its earlier files
 * left), in `rowsOf`'s estimate: its rows take about 1.5 times that (120 make the heap grow by
 * 175 MiB, and 0.75 of a 417 MiB heap by 488), where the keeper collects at half its floor more
 * (and 64 MiB). It was 300 and the heap's whole size, growing the heap by 1.6 times its floor at
 * least, and these rows took 2–3 s to make each time on a loaded machine (0.7–1.2 s now).
 */
const doubling = () => Math.max(120, Math.ceil((0.75 * heapSize()) / MIB));

/** About `mib` MiB of rows of ten numbers, as a training's rows are read (about 100 bytes each). */
const rowsOf = (mib: number) => {
  const rows: number[][] = [];
  for (let i = 0; i < Math.floor((mib * MIB) / 100); i++)
    rows.push([i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9]);
  return rows;
};

/** Heavy work whose rows are garbage once it is done. */
const heavyWork = (mib: number) => rowsOf(mib).length;

/** Until the keeper has asked for a collection. */
const collected = (keeper: { readonly collections: number }) =>
  until('the keeper to collect', async () => (keeper.collections > 0 ? true : undefined), 20_000, 50);

/** Keeps the event loop busy for `ms`, in slices, so that every look finds it busy. */
const busyFor = async (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const slice = Date.now() + 40;
    while (Date.now() < slice);
    await new Promise((r) => setImmediate(r));
  }
};

describe('the heap keeper gives memory back once heavy work is over', () => {
  // Each test starts from a collected heap: what the one before left is not this test's growth.
  beforeEach(() => fullCollection()());

  it('given heavy work that left its garbage, when the process is idle, then one full collection brings the heap back', async () => {
    const keeper = heapKeeper({ everyMs: 100, minimumBytes: 64 * MIB });
    try {
      const before = heapSize();
      expect(heavyWork(doubling())).toBeGreaterThan(0);
      const grown = heapSize();
      // The garbage is there: V8 collects it by itself only when the heap reaches its next limit.
      expect(grown - before).toBeGreaterThan(64 * MIB);
      await collected(keeper);
      expect(keeper.collections).toBe(1);
      expect(heapSize()).toBeLessThan(grown - 64 * MIB);
    } finally {
      keeper.stop();
    }
  });

  it('given a heap that grew and a busy event loop, then the keeper leaves the heap to V8', async () => {
    const floor = heapSize();
    const keeper = heapKeeper({ everyMs: 100, minimumBytes: 64 * MIB });
    try {
      const kept = rowsOf(doubling());
      // Past what an idle keeper collects at (1.5 times its floor, and 64 MiB more): only the busy
      // loop holds it back. A fixed 200 MiB was below that in a worker whose heap had passed 630 MiB.
      expect(heapSize()).toBeGreaterThan(Math.max(1.5 * floor, floor + 64 * MIB));
      await busyFor(1_000);
      expect(keeper.collections).toBe(0);
      expect(kept.length).toBeGreaterThan(0);
    } finally {
      keeper.stop();
    }
  });

  it('given live data that fills the heap, when idle, then the keeper collects once and not again', async () => {
    const keeper = heapKeeper({ everyMs: 100, minimumBytes: 64 * MIB });
    try {
      const mib = doubling();
      const live = rowsOf(mib);
      await collected(keeper);
      // The live rows stay: the heap they fill is the keeper's new floor.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(keeper.collections).toBe(1);
      expect(live.length).toBe(Math.floor((mib * MIB) / 100));
    } finally {
      keeper.stop();
    }
  });

  it('given a collection that fails, when the keeper asks for it, then the failure is logged once and the process goes on', async () => {
    const warnings: unknown[] = [];
    const logger = {
      info: () => undefined,
      warn: (fields: unknown) => warnings.push(fields),
    } as unknown as Logger;
    const keeper = heapKeeper({
      everyMs: 100,
      minimumBytes: 64 * MIB,
      logger,
      collect: () => {
        throw new Error('no collection today');
      },
    });
    try {
      expect(heavyWork(doubling())).toBeGreaterThan(0);
      await until(
        'the failure to be logged',
        async () => (warnings.length > 0 ? true : undefined),
        20_000,
        50,
      );
      // The heap it failed at is the keeper's floor: it does not ask again at every look.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(warnings).toEqual([{ err: new Error('no collection today') }]);
      expect(keeper.collections).toBe(0);
    } finally {
      keeper.stop();
    }
  });

  it("takes V8's collection once per process", () => {
    expect(fullCollection()).toBe(fullCollection());
  });
});
