import { MYSQL_FUNCTION_MACROS } from './mysqlFunctions';
import { valueGuardMacros } from './valueGuards';
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import path from 'node:path';
import { unavailable, messageOf } from '../shared/errors';
import { bytesOfSize } from '../shared/sizes';
import { isInvalidatedMessage } from './errors';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { scalarOn } from './scalar';

export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;
export type JsRow = Record<string, unknown>;

/**
 * Why the memory watch stopped the queries it watched: the process's resident memory past
 * SQL_MAX_PROCESS_MEMORY, or DuckDB's memory that can neither be evicted nor spilled past its
 * limit less the room kept for the projection writer (bytes throughout).
 */
export type MemoryPressure =
  | { kind: 'process'; rss: number; limit: number }
  | { kind: 'heap'; used: number; ceiling: number; limit: number }
  | { kind: 'engine'; held: number; ceiling: number; limit: number };

/**
 * The read side: one DuckDB database per API process. The projection runner owns one connection
 * (the only writer); readers borrow connections from a small pool, so an analyst's slow query never
 * queues behind another and MVCC keeps them consistent with the writer's commits.
 */
export type Duck = {
  readonly instance: DuckDBInstance;
  readonly writer: DuckDBConnection;
  /**
   * Runs `work` on a pooled reader connection. `sql`: a query of the SQL endpoint, which may hold
   * only its share of the pool (the rest stays free for the API's own reads).
   */
  withReader<T>(work: (connection: DuckDBConnection) => Promise<T>, options?: { sql?: boolean }): Promise<T>;
  /** Whether the calling async context holds a pooled reader (its reads run on it). */
  holdsReader(): boolean;
  /** Runs `work` outside any reader this call chain holds (see the implementation). */
  detached<T>(work: () => Promise<T>): Promise<T>;
  /** Convenience: a parameterised query on a reader, rows as plain JS values. */
  query(sql: string, params?: SqlParams): Promise<JsRow[]>;
  /**
   * Shutting down: interrupts what runs on the pooled readers, and refuses new reads (503 /
   * SQL 1040) from now on. DuckDB's own work does not stop for the process to exit (its
   * destructor waits for it): a long query kept a stopping process at 99% CPU for 11 minutes.
   */
  stop(): void;
  /** Whether `stop` was called. */
  readonly stopping: boolean;
  /**
   * Calls `fire` (once) when a SQL query should stop for memory (a canceller is returned):
   * - the process's resident memory passes `processMemoryLimit` after having grown since this
   *   call: DuckDB's memory_limit does not see every allocation (see valueGuards.ts);
   * - with it, Node's heap passes half its limit after having grown since this call (answers
   *   being converted live there; a heap at its limit ends the process);
   * - DuckDB's unspillable memory passes `engineMemoryCeiling` while this call is at least
   *   ENGINE_WATCH_AFTER_MS old: the projection writer needs room under DuckDB's memory_limit,
   *   and a commit that meets the limit makes DuckDB invalidate the whole database.
   */
  onMemoryPressure(fire: (pressure: MemoryPressure) => void): () => void;
  /**
   * Called by the projection writer, on its connection, before it commits a batch: while SQL
   * queries have run long enough to hold memory, and DuckDB's unspillable memory is past half its
   * limit (after a shortage: at all), those queries are stopped, and the commit waits (at most
   * ROOM_WAIT_MS) for the memory to come back under half. A commit that meets DuckDB's limit
   * fails, and one whose rollback meets it too invalidates the database.
   */
  makeRoomForWriter(writer: DuckDBConnection, after?: { shortage: boolean }): Promise<void>;
  /** The resident memory (bytes) past which `onMemoryPressure` fires; 0: never. */
  readonly processMemoryLimit: number;
  /** DuckDB's memory_limit, in bytes. */
  readonly engineMemoryLimit: number;
  /** DuckDB's unspillable memory (bytes) past which `onMemoryPressure` fires: the limit less the writer's room. */
  readonly engineMemoryCeiling: number;
  /**
   * Calls `listener` (once) when DuckDB reports the database invalidated, by a read (any
   * `withReader`) or by a caller who met it (`noticeFailure`): the instance answers nothing more
   * until it is opened again, which only a new process does safely (see main.ts).
   */
  onInvalidated(listener: (message: string) => void): void;
  /** Tells the invalidation watch of an error met on one of the instance's connections. */
  noticeFailure(error: unknown): void;
  /** Why DuckDB invalidated the database, once it has. */
  readonly invalidated: string | null;
  /** Stops, waits (briefly) for the readers to come back, and closes everything. */
  close(): Promise<void>;
};

/**
 * Every DuckDB call holds a thread of libuv's pool while DuckDB works (4 threads unless
 * UV_THREADPOOL_SIZE says otherwise; main.ts raises it before the pool starts), shared with the
 * writer, the SQLite log and file I/O: four long queries stopped every other read of the process,
 * whatever the reader pool kept free. So SQL queries get all readers but one, and at most the
 * pool's threads but two.
 */
const defaultSqlReaders = (readers: number) => {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.min(readers - 1, threads - 2);
};

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

export const openDuck = async (options: {
  /** A file path, or ':memory:'. */
  file: string;
  /** Files the SQL endpoint may read (uploads); everything else is off limits. */
  allowedDirectory: string;
  readers?: number;
  threads?: number;
  /** How long a read waits for a pooled connection before answering "busy". */
  acquireTimeoutMs?: number;
  /** Readers SQL endpoint queries may hold at once (default: all but one; at least one). */
  sqlReaders?: number;
  /** DuckDB's `memory_limit` (e.g. `2GiB`): past it, work spills to `tempDirectory` or fails. */
  memoryLimit?: string;
  /** Where DuckDB spills what does not fit in memory. */
  tempDirectory?: string;
  /** The largest value repeat, lpad, range, … may make on a reader (see valueGuards.ts). */
  maxValueBytes?: number;
  /** Resident bytes past which SQL queries are told to stop (`onMemoryPressure`); 0: never. */
  processMemoryLimit?: number;
}): Promise<Duck> => {
  if (options.file !== ':memory:')
    fs.mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
  fs.mkdirSync(options.allowedDirectory, { recursive: true });
  if (options.tempDirectory) fs.mkdirSync(options.tempDirectory, { recursive: true });
  const instance = await DuckDBInstance.create(options.file, {
    // Set when the instance is made, before the configuration is locked below: one heavy query
    // (a cross join of two large series) took gigabytes, and ten of them starved the process.
    ...(options.memoryLimit ? { memory_limit: options.memoryLimit } : {}),
    ...(options.tempDirectory ? { temp_directory: path.resolve(options.tempDirectory) } : {}),
    // No network here and no reason to fetch code at run time: unknown extensions fail fast.
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Bulk loads and scans want every core; many small queries are served by the pooled
    // connections (and the answer cache) rather than by intra-query parallelism.
    threads: String(options.threads ?? Math.max(1, os.availableParallelism())),
  });
  const writer = await instance.connect();
  // These switches only take effect as statements, in this order (stack-notes §7). Once the
  // configuration is locked, user SQL can neither widen file access nor change settings.
  const allowed = path.resolve(options.allowedDirectory).replace(/'/g, "''") + '/';
  await writer.run(`SET allowed_directories = ['${allowed}']`);
  await writer.run('SET enable_external_access = false');
  await writer.run('SET lock_configuration = true');
  const engineMemoryLimit = bytesOfSize(
    String((await writer.runAndReadAll("SELECT current_setting('memory_limit') AS l")).getRows()[0]?.[0]),
  );
  // No limit DuckDB can name (it is unbounded, or printed in a way not known here): no engine watch.
  const engineMemoryCeiling = Number.isFinite(engineMemoryLimit)
    ? engineMemoryLimit - writerRoom(engineMemoryLimit)
    : Infinity;

  const idle: DuckDBConnection[] = [];
  const waiting: { grant: (c: DuckDBConnection) => void; refuse: () => void }[] = [];
  const readers = options.readers ?? 8;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? 10_000;
  // One call per connection (DuckDB runs a text's statements in order): 14 calls each made the
  // 8 readers 112 trips to DuckDB's thread at every start.
  const macros = [
    ...MYSQL_FUNCTION_MACROS,
    ...(options.maxValueBytes !== undefined ? valueGuardMacros(options.maxValueBytes) : []),
  ].join(';\n');
  /** Readers made so far (idle, lent, or being made), and those being made. */
  let opened = 0;
  let opening = 0;
  const openReader = async () => {
    opening++;
    try {
      const reader = await instance.connect();
      try {
        await reader.run(macros);
      } catch (error) {
        reader.closeSync();
        throw error;
      }
      return reader;
    } finally {
      opening--;
    }
  };
  // Readers are made as reads first need them, up to `readers`: their macros were half of an
  // app's start (a process that never reads concurrently makes one or two). The first is made
  // now, so a start still fails at once should the macros not install.
  idle.push(await openReader());
  opened = 1;

  let stopping = false;
  const stopped = () => unavailable('The server is shutting down', 1, 'Server busy');
  const acquire = (timeoutMs: number): Promise<DuckDBConnection> => {
    if (stopping) return Promise.reject(stopped());
    const c = idle.pop();
    if (c) return Promise.resolve(c);
    if (opened < readers) {
      opened++;
      return openReader().then(
        (reader) => {
          // Made while the pool stopped: closed here, before the instance closes (`close` waits for it).
          if (!stopping) return reader;
          reader.closeSync();
          throw stopped();
        },
        (error: unknown) => {
          opened--;
          throw error;
        },
      );
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: (granted: DuckDBConnection) => {
          clearTimeout(timer);
          resolve(granted);
        },
        refuse: () => {
          clearTimeout(timer);
          reject(stopped());
        },
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(waiter), 1);
        reject(
          unavailable(
            `All ${readers} read connections stayed busy for ${acquireTimeoutMs} ms; try again shortly`,
            1,
            'Server busy',
          ),
        );
      }, timeoutMs);
      waiting.push(waiter);
    });
  };

  // SQL endpoint queries hold at most `sqlReaders` connections, so heavy analytical queries
  // never take the connections the API's own reads (GET /api/projects, name resolution) need:
  // ten cross joins made a GET wait 59 s. A query beyond the share waits for a slot, within
  // the same deadline as for a connection, then answers "server busy".
  const sqlReaders = Math.max(1, Math.min(readers, options.sqlReaders ?? defaultSqlReaders(readers)));
  let sqlHeld = 0;
  const sqlWaiting: (() => void)[] = [];
  const takeSqlSlot = (): Promise<void> => {
    if (sqlHeld < sqlReaders) {
      sqlHeld++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        sqlHeld++;
        resolve();
      };
      const timer = setTimeout(() => {
        sqlWaiting.splice(sqlWaiting.indexOf(waiter), 1);
        reject(
          unavailable(
            `All ${sqlReaders} connections for SQL queries stayed busy for ${acquireTimeoutMs} ms; try again shortly`,
            1,
            'Server busy',
          ),
        );
      }, acquireTimeoutMs);
      sqlWaiting.push(waiter);
    });
  };
  const releaseSqlSlot = () => {
    sqlHeld--;
    sqlWaiting.shift()?.();
  };
  const release = (c: DuckDBConnection) => {
    const next = waiting.shift();
    if (next) next.grant(c);
    else idle.push(c);
  };

  // The reader this async call chain already holds. A read made while holding one (a query that
  // resolves names through a service, which reads too) runs on it: asking the pool for a second
  // connection would wait on itself once every connection is held that way, and hang for good.
  // Work started inside and outliving the holder (a background task) finds the lease ended and
  // takes a connection of its own.
  const held = new AsyncLocalStorage<{ connection: DuckDBConnection; ended: boolean }>();
  const leased = new Set<DuckDBConnection>();
  const withReader = async <T>(
    work: (c: DuckDBConnection) => Promise<T>,
    lane: { sql?: boolean } = {},
  ): Promise<T> => {
    const lease = held.getStore();
    if (lease && !lease.ended) return work(lease.connection);
    const started = Date.now();
    if (lane.sql) await takeSqlSlot();
    try {
      const c = await acquire(Math.max(1, acquireTimeoutMs - (Date.now() - started)));
      const mine = { connection: c, ended: false };
      leased.add(c);
      try {
        return await held.run(mine, () => work(c));
      } catch (error) {
        noticeFailure(error);
        throw error;
      } finally {
        mine.ended = true;
        leased.delete(c);
        release(c);
      }
    } finally {
      if (lane.sql) releaseSqlSlot();
    }
  };

  let invalidated: string | null = null;
  const invalidationListeners: ((message: string) => void)[] = [];
  const noticeFailure = (error: unknown) => {
    const message = messageOf(error);
    if (invalidated !== null || !isInvalidatedMessage(message)) return;
    invalidated = message;
    for (const listener of invalidationListeners.splice(0)) listener(message);
  };

  const stop = () => {
    stopping = true;
    for (const waiter of waiting.splice(0)) waiter.refuse();
    // Again and again until every reader is back: an interrupt reaches only a call already
    // running, and a call may still be waiting for a thread of libuv's pool.
    const interruptAll = () => {
      for (const c of leased) c.interrupt();
      if (leased.size === 0) clearInterval(nagging);
    };
    const nagging = setInterval(interruptAll, 100);
    nagging.unref();
    interruptAll();
  };

  // The memory watch: while anybody listens, the process's resident memory is sampled; a listener
  // fires once it is past the limit and above what it was when the listener came (a process that
  // stays large after a query, its allocator keeping freed pages, does not stop every query after).
  // DuckDB's unspillable memory is sampled too, on a connection of its own, for listeners at least
  // ENGINE_WATCH_AFTER_MS old: a query that short holds little, and `SELECT 1` at thousands a
  // second pays nothing.
  const processMemoryLimit = Math.max(0, options.processMemoryLimit ?? 0);
  const engineWatch = Number.isFinite(engineMemoryCeiling);
  const listeners = new Map<
    symbol,
    { fire: (pressure: MemoryPressure) => void; from: number; heapFrom: number; since: number }
  >();
  let sampler: ReturnType<typeof setInterval> | undefined;
  let monitor: Promise<DuckDBConnection> | undefined;
  let lookingAtEngine: Promise<void> | undefined;
  const GROWTH = 32 * 1024 * 1024;
  // Node's heap, watched with the process's memory: answers being converted live there (up to
  // SQL_MAX_ANSWER_BYTES each, several times that while made into JSON), and a heap at its limit
  // ends the process (`FATAL ERROR: … JavaScript heap out of memory`): six 64 MiB answers at once
  // did under --max-old-space-size=256. Queries stop once half of it is used (the limit counts the
  // young generation too, which `--max-semi-space-size=64` makes up to 192 MiB).
  const heapLimit = v8.getHeapStatistics().heap_size_limit;
  const heapCeiling = heapLimit / 2;
  const heapUsed = () => v8.getHeapStatistics().used_heap_size;
  const fire = (keys: Iterable<symbol>, pressure: MemoryPressure) => {
    for (const key of keys) {
      const listener = listeners.get(key);
      if (!listener) continue;
      listeners.delete(key);
      listener.fire(pressure);
    }
  };
  const engineOver = (held: number, ceiling = engineMemoryCeiling): MemoryPressure => ({
    kind: 'engine',
    held,
    ceiling,
    limit: engineMemoryLimit,
  });
  // A commit begins with at most half the limit held: one step of a query's arena (they double:
  // 64, 128, 256 MiB …) during the commit then still leaves it room. With the ceiling alone, 3 to
  // 5 batches in 10 s met the limit in the reproduction above.
  const commitCeiling = engineMemoryLimit / 2;
  /** The listeners old enough for the engine watch. */
  const longRunning = () => {
    const now = performance.now();
    return [...listeners].filter(([, l]) => now - l.since >= ENGINE_WATCH_AFTER_MS).map(([key]) => key);
  };
  const lookAtEngine = async (keys: symbol[]) => {
    monitor ??= instance.connect();
    const held = await unspillableMemoryHeld(await monitor);
    if (held > engineMemoryCeiling) fire(keys, engineOver(held));
  };
  const makeRoomForWriter = async (c: DuckDBConnection, after = { shortage: false }) => {
    // After a write met the limit, the memory may be back already (the query that held it failed
    // too), or held by what is not watched: a moment's pause before the next try.
    if (after.shortage) await new Promise((resolve) => setTimeout(resolve, 20));
    if (!engineWatch) return;
    const queries = longRunning();
    if (queries.length === 0) return;
    let held = await unspillableMemoryHeld(c);
    if (held <= commitCeiling && !after.shortage) return;
    fire(queries, engineOver(held, commitCeiling));
    const until = performance.now() + ROOM_WAIT_MS;
    while (held > commitCeiling && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      held = await unspillableMemoryHeld(c);
    }
  };
  const stopSampling = () => {
    clearInterval(sampler);
    sampler = undefined;
  };
  const sample = () => {
    if (processMemoryLimit > 0) {
      const rss = process.memoryUsage.rss();
      if (rss > processMemoryLimit)
        fire(
          [...listeners].filter(([, l]) => rss > l.from + GROWTH).map(([key]) => key),
          { kind: 'process', rss, limit: processMemoryLimit },
        );
      const used = heapUsed();
      if (used > heapCeiling)
        fire(
          [...listeners].filter(([, l]) => used > l.heapFrom + GROWTH).map(([key]) => key),
          { kind: 'heap', used, ceiling: heapCeiling, limit: heapLimit },
        );
    }
    if (engineWatch && !lookingAtEngine && !stopping) {
      const due = longRunning();
      if (due.length > 0)
        lookingAtEngine = lookAtEngine(due)
          .catch(() => undefined)
          .finally(() => (lookingAtEngine = undefined));
    }
    if (listeners.size === 0) stopSampling();
  };
  const onMemoryPressure = (listener: (pressure: MemoryPressure) => void) => {
    if (processMemoryLimit === 0 && !engineWatch) return () => undefined;
    const key = Symbol('memory listener');
    listeners.set(key, {
      fire: listener,
      from: processMemoryLimit > 0 ? process.memoryUsage.rss() : 0,
      heapFrom: processMemoryLimit > 0 ? heapUsed() : 0,
      since: performance.now(),
    });
    if (!sampler) {
      sampler = setInterval(sample, 20);
      sampler.unref();
    }
    return () => {
      listeners.delete(key);
      if (listeners.size === 0 && sampler) stopSampling();
    };
  };

  return {
    instance,
    writer,
    withReader,
    onMemoryPressure,
    makeRoomForWriter,
    onInvalidated: (listener) => {
      if (invalidated !== null) listener(invalidated);
      else invalidationListeners.push(listener);
    },
    noticeFailure,
    get invalidated() {
      return invalidated;
    },
    processMemoryLimit,
    engineMemoryLimit,
    engineMemoryCeiling,
    /**
     * Runs `work` as if this call chain held no reader: long work started while holding one (an
     * agent answering inside a query) takes readers of its own instead of sharing one connection
     * between concurrent calls.
     */
    detached: <T>(work: () => Promise<T>): Promise<T> => held.exit(work),
    holdsReader: () => {
      const lease = held.getStore();
      return lease !== undefined && !lease.ended;
    },
    query: (sql, params) =>
      withReader(async (c) => {
        const reader = await c.runAndReadAll(sql, params);
        return reader.getRowObjectsJS() as JsRow[];
      }),
    stop,
    get stopping() {
      return stopping;
    },
    close: async () => {
      stop();
      // Interrupted work gives its connection back within milliseconds; one DuckDB keeps busy
      // longer is left to the process's end.
      const until = Date.now() + 5000;
      while ((leased.size > 0 || opening > 0) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 10));
      stopSampling();
      // Closing a connection while a call runs on it crashed the process (SIGSEGV).
      await lookingAtEngine;
      if (monitor) (await monitor.catch(() => undefined))?.closeSync();
      for (const c of idle) c.closeSync();
      writer.closeSync();
      instance.closeSync();
      // Node calls every enabled AsyncLocalStorage for each promise the process makes, for as long
      // as the process lives: a closed database's must not stay among them.
      held.disable();
    },
  };
};
