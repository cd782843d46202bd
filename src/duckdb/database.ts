import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import { InvalidationWatch } from './invalidation';
import { MemoryWatch, type MemoryPressure } from './memoryWatch';
import { ReaderPool, type BackFromOutside, type ReaderPoolOptions } from './readerPool';
import { readRowObjects } from './readRows';
import { openInstanceWithWriter, type InstanceOptions } from './writer';

export type { MemoryPressure } from './memoryWatch';

export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;
export type JsRow = Record<string, unknown>;

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
  /**
   * Runs `work`, which waits on something outside the process (an LLM provider, an integration's
   * database), detached; meanwhile the reader this call chain holds gives back its SQL slot and
   * does not count among the readers others may open. The slot is taken again (within `back`)
   * before the chain goes on; past SQL_MAX_WAITING_OUTSIDE such waits at once, "busy" (1040).
   */
  waitingOutside<T>(work: () => Promise<T>, back: BackFromOutside): Promise<T>;
  /** What the readers are doing now: lent, waiting outside, SQL slots held, idle, made. */
  readerUse(): ReturnType<ReaderPool['use']>;
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
   * Looks at Node's heap now, as the sampler does every 20 ms, firing the listeners it concerns:
   * for callers that turn DuckDB's values into JavaScript ones, whose growth outruns the sampler.
   * Answers the pressure when the heap is past its ceiling and the caller holds 4 MiB or more of
   * answer (`holding`, bytes), however large the heap was when it began; else undefined. Costs
   * well under a microsecond.
   */
  lookAtHeap(holding?: number): MemoryPressure | undefined;
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
 * Opens the read side: the database and its writer (writer.ts), the reader pool (readerPool.ts), the
 * memory and heap watch (memoryWatch.ts) and the invalidation watch (invalidation.ts), joined.
 */
export const openDuck = async (
  options: InstanceOptions &
    ReaderPoolOptions & {
      /** Resident bytes past which SQL queries are told to stop (`onMemoryPressure`); 0: never. */
      processMemoryLimit?: number;
    },
): Promise<Duck> => {
  const { instance, writer, engineMemoryLimit } = await openInstanceWithWriter(options);
  const invalidation = new InvalidationWatch();
  const noticeFailure = (error: unknown) => invalidation.notice(error);
  const pool = await ReaderPool.open(instance, options, noticeFailure);
  const watch = new MemoryWatch(instance, engineMemoryLimit, options.processMemoryLimit, () => pool.stopping);
  const withReader: Duck['withReader'] = (work, lane) => pool.withReader(work, lane);
  return {
    instance,
    writer,
    withReader,
    onMemoryPressure: (listener) => watch.onMemoryPressure(listener),
    lookAtHeap: (holding) => watch.lookAtHeap(holding),
    makeRoomForWriter: (c, after) => watch.makeRoomForWriter(c, after),
    onInvalidated: (listener) => invalidation.onInvalidated(listener),
    noticeFailure,
    get invalidated() {
      return invalidation.invalidated;
    },
    processMemoryLimit: watch.processMemoryLimit,
    engineMemoryLimit,
    engineMemoryCeiling: watch.engineMemoryCeiling,
    detached: (work) => pool.detached(work),
    waitingOutside: (work, back) => pool.waitingOutside(work, back),
    readerUse: () => pool.use(),
    holdsReader: () => pool.holdsReader(),
    query: (sql, params) => withReader((c) => readRowObjects(c, sql, params)),
    stop: () => pool.stop(),
    get stopping() {
      return pool.stopping;
    },
    close: async () => {
      pool.stop();
      // Interrupted work gives its connection back within milliseconds; one DuckDB keeps busy
      // longer is left to the process's end.
      await pool.returned(5000);
      await watch.close();
      pool.close();
      writer.closeSync();
      instance.closeSync();
    },
  };
};
