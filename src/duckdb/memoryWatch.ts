import v8 from 'node:v8';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { scalarOn } from './scalar';

/**
 * Why the memory watch stopped the queries it watched: the process's resident memory past
 * SQL_MAX_PROCESS_MEMORY, or DuckDB's memory that can neither be evicted nor spilled past its
 * limit less the room kept for the projection writer (bytes throughout).
 */
export type MemoryPressure =
  | { kind: 'process'; rss: number; limit: number }
  | { kind: 'heap'; used: number; ceiling: number; limit: number }
  | { kind: 'engine'; held: number; ceiling: number; limit: number };

const MIB = 1024 * 1024;

/**
 * The room kept under DuckDB's memory_limit for the projection writer: a fifth of the limit, at
 * least 64 MiB, at most half. Reproduced (300 MiB limit, three clients aggregating 2 GB of text):
 * the writer's batch met "Out of Memory", the rollback that followed met it too, and DuckDB
 * invalidated the database ("FATAL … database has been invalidated") until a restart.
 */
export const writerRoom = (limit: number) => Math.min(limit / 2, Math.max(64 * MIB, limit / 5));

/**
 * The memory the engine watch adds up: DuckDB's `ALLOCATOR` tag, which its buffer allocator hands
 * out (aggregate states, arenas, string heaps) and which can be neither evicted nor spilled. The
 * other tags are not counted: cached table blocks (`BASE_TABLE`) are evicted for the writer, and
 * a sort or hash table past the limit spills to the temporary directory (an ORDER BY over 6M rows
 * held 291 MiB of 300 with 227 MiB spilled, and finished).
 */
const UNSPILLABLE_MEMORY_SQL =
  "SELECT sum(memory_usage_bytes) AS held FROM duckdb_memory() WHERE tag = 'ALLOCATOR'";

/** The bytes DuckDB holds that it can neither evict nor spill (`UNSPILLABLE_MEMORY_SQL`), read on `c`. */
export const unspillableMemoryHeld = async (c: DuckDBConnection): Promise<number> =>
  Number((await scalarOn(c, UNSPILLABLE_MEMORY_SQL)) ?? 0);

/** How long the writer waits for stopped queries to give their memory back before it commits anyway. */
const ROOM_WAIT_MS = 500;

/** How long a query runs before the engine watch looks at DuckDB's memory for it (a look costs ~1.5 ms of a pool thread). */
const ENGINE_WATCH_AFTER_MS = 20;

/** The answer's bytes past which the heap past its ceiling stops a caller converting it (`lookAtHeap`). */
const ANSWER_HOLDING = 4 * 1024 * 1024;

/** Growth (bytes) since a listener came, past which the process's or the heap's size stops its query. */
const GROWTH = 32 * 1024 * 1024;

type Listener = { fire: (pressure: MemoryPressure) => void; from: number; heapFrom: number; since: number };

/**
 * The memory watch: while anybody listens, the process's resident memory is sampled; a listener
 * fires once it is past the limit and above what it was when the listener came (a process that
 * stays large after a query, its allocator keeping freed pages, does not stop every query after).
 * DuckDB's unspillable memory is sampled too, on a connection of its own, for listeners at least
 * ENGINE_WATCH_AFTER_MS old: a query that short holds little, and `SELECT 1` at thousands a
 * second pays nothing. It makes room for the projection writer's commits as well.
 */
export class MemoryWatch {
  /** The resident memory (bytes) past which listeners fire; 0: never. */
  readonly processMemoryLimit: number;
  /** DuckDB's unspillable memory (bytes) past which listeners fire: the limit less the writer's room. */
  readonly engineMemoryCeiling: number;
  private readonly engineWatch: boolean;
  /**
   * A commit begins with at most half the limit held: one step of a query's arena (they double:
   * 64, 128, 256 MiB …) during the commit then still leaves it room. With the ceiling alone, 3 to
   * 5 batches in 10 s met the limit in the reproduction above.
   */
  private readonly commitCeiling: number;
  /**
   * Node's heap, watched with the process's memory: answers being converted live there (up to
   * SQL_MAX_ANSWER_BYTES each, several times that while made into JSON), and a heap at its limit
   * ends the process (`FATAL ERROR: … JavaScript heap out of memory`): six 64 MiB answers at once
   * did under --max-old-space-size=256. Queries stop once half of it is used (the limit counts the
   * young generation too, which `--max-semi-space-size=64` makes up to 192 MiB).
   */
  private readonly heapLimit = v8.getHeapStatistics().heap_size_limit;
  private readonly heapCeiling = this.heapLimit / 2;
  private readonly listeners = new Map<symbol, Listener>();
  private sampler: ReturnType<typeof setInterval> | undefined;
  private monitor: Promise<DuckDBConnection> | undefined;
  private lookingAtEngine: Promise<void> | undefined;

  constructor(
    private readonly instance: DuckDBInstance,
    /** DuckDB's memory_limit, in bytes (Infinity: none it can name, and no engine watch). */
    readonly engineMemoryLimit: number,
    processMemoryLimit: number | undefined,
    /** Whether the readers are stopping: the engine is not looked at then. */
    private readonly stopping: () => boolean,
  ) {
    this.processMemoryLimit = Math.max(0, processMemoryLimit ?? 0);
    // No limit DuckDB can name (it is unbounded, or printed in a way not known here): no engine watch.
    this.engineMemoryCeiling = Number.isFinite(engineMemoryLimit)
      ? engineMemoryLimit - writerRoom(engineMemoryLimit)
      : Infinity;
    this.engineWatch = Number.isFinite(this.engineMemoryCeiling);
    this.commitCeiling = engineMemoryLimit / 2;
  }

  /** See `Duck.onMemoryPressure`. */
  onMemoryPressure(listener: (pressure: MemoryPressure) => void): () => void {
    if (this.processMemoryLimit === 0 && !this.engineWatch) return () => undefined;
    const key = Symbol('memory listener');
    this.listeners.set(key, {
      fire: listener,
      from: this.processMemoryLimit > 0 ? process.memoryUsage.rss() : 0,
      heapFrom: this.processMemoryLimit > 0 ? heapUsed() : 0,
      since: performance.now(),
    });
    if (!this.sampler) {
      this.sampler = setInterval(() => this.sample(), 20);
      this.sampler.unref();
    }
    return () => {
      this.listeners.delete(key);
      if (this.listeners.size === 0 && this.sampler) this.stopSampling();
    };
  }

  /** See `Duck.makeRoomForWriter`. */
  async makeRoomForWriter(c: DuckDBConnection, after = { shortage: false }): Promise<void> {
    // After a write met the limit, the memory may be back already (the query that held it failed
    // too), or held by what is not watched: a moment's pause before the next try.
    if (after.shortage) await new Promise((resolve) => setTimeout(resolve, 20));
    if (!this.engineWatch) return;
    const queries = this.longRunning();
    if (queries.length === 0) return;
    let held = await unspillableMemoryHeld(c);
    if (held <= this.commitCeiling && !after.shortage) return;
    this.fire(queries, this.engineOver(held, this.commitCeiling));
    const until = performance.now() + ROOM_WAIT_MS;
    while (held > this.commitCeiling && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      held = await unspillableMemoryHeld(c);
    }
  }

  /** Stops sampling and closes the watch's connection (once no look at the engine runs on it). */
  async close(): Promise<void> {
    this.stopSampling();
    // Closing a connection while a call runs on it crashed the process (SIGSEGV).
    await this.lookingAtEngine;
    if (this.monitor) (await this.monitor.catch(() => undefined))?.closeSync();
  }

  /**
   * See `Duck.lookAtHeap`. The sampler alone was outrun: six 64 MiB answers converted at once took
   * the heap from under its ceiling to its limit between two samples, about one run in ten of
   * test/faults/memory-pressure.spec.ts ("FATAL ERROR: … JavaScript heap out of memory"); and the
   * growth rule let twelve answers, each starting over what the others held, climb 32 MiB each.
   */
  lookAtHeap(holding = 0): MemoryPressure | undefined {
    if (this.processMemoryLimit === 0) return undefined;
    const used = heapUsed();
    if (used <= this.heapCeiling) return undefined;
    const pressure: MemoryPressure = { kind: 'heap', used, ceiling: this.heapCeiling, limit: this.heapLimit };
    this.fire(
      this.listenersGrownPast(used, (l) => l.heapFrom),
      pressure,
    );
    return holding >= ANSWER_HOLDING ? pressure : undefined;
  }

  private sample() {
    if (this.processMemoryLimit > 0) {
      const rss = process.memoryUsage.rss();
      if (rss > this.processMemoryLimit)
        this.fire(
          this.listenersGrownPast(rss, (l) => l.from),
          {
            kind: 'process',
            rss,
            limit: this.processMemoryLimit,
          },
        );
      this.lookAtHeap();
    }
    if (this.engineWatch && !this.lookingAtEngine && !this.stopping()) {
      const due = this.longRunning();
      if (due.length > 0)
        this.lookingAtEngine = this.lookAtEngine(due)
          .catch(() => undefined)
          .finally(() => (this.lookingAtEngine = undefined));
    }
    if (this.listeners.size === 0) this.stopSampling();
  }

  /** The listeners for which `now` is more than GROWTH past what it was when they came (`from`). */
  private listenersGrownPast(now: number, from: (l: Listener) => number): symbol[] {
    return [...this.listeners].filter(([, l]) => now > from(l) + GROWTH).map(([key]) => key);
  }

  /** The listeners old enough for the engine watch. */
  private longRunning(): symbol[] {
    const now = performance.now();
    return [...this.listeners].filter(([, l]) => now - l.since >= ENGINE_WATCH_AFTER_MS).map(([key]) => key);
  }

  private async lookAtEngine(keys: symbol[]) {
    this.monitor ??= this.instance.connect();
    const held = await unspillableMemoryHeld(await this.monitor);
    if (held > this.engineMemoryCeiling) this.fire(keys, this.engineOver(held));
  }

  private engineOver(held: number, ceiling = this.engineMemoryCeiling): MemoryPressure {
    return { kind: 'engine', held, ceiling, limit: this.engineMemoryLimit };
  }

  private fire(keys: Iterable<symbol>, pressure: MemoryPressure) {
    for (const key of keys) {
      const listener = this.listeners.get(key);
      if (!listener) continue;
      this.listeners.delete(key);
      listener.fire(pressure);
    }
  }

  private stopSampling() {
    clearInterval(this.sampler);
    this.sampler = undefined;
  }
}

const heapUsed = () => v8.getHeapStatistics().used_heap_size;
