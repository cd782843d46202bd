import { AsyncLocalStorage } from 'node:async_hooks';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { unavailable } from '../shared/errors';
import { MYSQL_FUNCTION_MACROS } from './mysqlFunctions';
import { valueGuardMacros } from './valueGuards';

/** How many readers, how long a read waits for one, and what SQL queries may hold. */
export type ReaderPoolOptions = {
  readers?: number;
  /** How long a read waits for a pooled connection before answering "busy". */
  acquireTimeoutMs?: number;
  /** Readers SQL endpoint queries may hold at once (default: all but one; at least one). */
  sqlReaders?: number;
  /** The largest value repeat, lpad, range, … may make on a reader (see valueGuards.ts). */
  maxValueBytes?: number;
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

const shuttingDown = () => unavailable('The server is shutting down', 1, 'Server busy');

/**
 * The readers' connections: made as reads first need them, up to `readers`, and lent one per call
 * chain (`withReader`). A read waits for one within the acquire deadline, then answers "busy".
 */
export class ReaderPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiting: { grant: (c: DuckDBConnection) => void; refuse: () => void }[] = [];
  private readonly readers: number;
  private readonly acquireTimeoutMs: number;
  /** Installed on every reader as it is made (see `openReader`). */
  private readonly macros: string;
  /** Readers made so far (idle, lent, or being made), and those being made. */
  private opened = 0;
  private opening = 0;
  private stopRequested = false;
  private readonly sqlShare: SqlShare;
  /**
   * The reader this async call chain already holds. A read made while holding one (a query that
   * resolves names through a service, which reads too) runs on it: asking the pool for a second
   * connection would wait on itself once every connection is held that way, and hang for good.
   * Work started inside and outliving the holder (a background task) finds the lease ended and
   * takes a connection of its own.
   */
  private readonly held = new AsyncLocalStorage<{ connection: DuckDBConnection; ended: boolean }>();
  private readonly leased = new Set<DuckDBConnection>();

  private constructor(
    private readonly instance: DuckDBInstance,
    options: ReaderPoolOptions,
    /** Tells the invalidation watch of an error a read met. */
    private readonly noticeFailure: (error: unknown) => void,
  ) {
    this.readers = options.readers ?? 8;
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 10_000;
    // One call per connection (DuckDB runs a text's statements in order): 14 calls each made the
    // 8 readers 112 trips to DuckDB's thread at every start.
    this.macros = [
      ...MYSQL_FUNCTION_MACROS,
      ...(options.maxValueBytes !== undefined ? valueGuardMacros(options.maxValueBytes) : []),
    ].join(';\n');
    this.sqlShare = new SqlShare(
      Math.max(1, Math.min(this.readers, options.sqlReaders ?? defaultSqlReaders(this.readers))),
      this.acquireTimeoutMs,
    );
  }

  /**
   * Readers are made as reads first need them, up to `readers`: their macros were half of an
   * app's start (a process that never reads concurrently makes one or two). The first is made
   * now, so a start still fails at once should the macros not install.
   */
  static async open(
    instance: DuckDBInstance,
    options: ReaderPoolOptions,
    noticeFailure: (error: unknown) => void,
  ): Promise<ReaderPool> {
    const pool = new ReaderPool(instance, options, noticeFailure);
    pool.idle.push(await pool.openReader());
    pool.opened = 1;
    return pool;
  }

  /** See `Duck.withReader`. */
  async withReader<T>(work: (c: DuckDBConnection) => Promise<T>, lane: { sql?: boolean } = {}): Promise<T> {
    const lease = this.held.getStore();
    if (lease && !lease.ended) return work(lease.connection);
    const started = Date.now();
    if (lane.sql) await this.sqlShare.take();
    try {
      const c = await this.acquire(Math.max(1, this.acquireTimeoutMs - (Date.now() - started)));
      const mine = { connection: c, ended: false };
      this.leased.add(c);
      try {
        return await this.held.run(mine, () => work(c));
      } catch (error) {
        this.noticeFailure(error);
        throw error;
      } finally {
        mine.ended = true;
        this.leased.delete(c);
        this.release(c);
      }
    } finally {
      if (lane.sql) this.sqlShare.release();
    }
  }

  /** See `Duck.holdsReader`. */
  holdsReader(): boolean {
    const lease = this.held.getStore();
    return lease !== undefined && !lease.ended;
  }

  /**
   * Runs `work` as if this call chain held no reader: long work started while holding one (an
   * agent answering inside a query) takes readers of its own instead of sharing one connection
   * between concurrent calls.
   */
  detached<T>(work: () => Promise<T>): Promise<T> {
    return this.held.exit(work);
  }

  /** Whether `stop` was called. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** See `Duck.stop`. */
  stop() {
    this.stopRequested = true;
    for (const waiter of this.waiting.splice(0)) waiter.refuse();
    // Again and again until every reader is back: an interrupt reaches only a call already
    // running, and a call may still be waiting for a thread of libuv's pool.
    const interruptAll = () => {
      for (const c of this.leased) c.interrupt();
      if (this.leased.size === 0) clearInterval(nagging);
    };
    const nagging = setInterval(interruptAll, 100);
    nagging.unref();
    interruptAll();
  }

  /** Resolves once every reader lent and being made is back, or after `withinMs`. */
  async returned(withinMs: number): Promise<void> {
    const until = Date.now() + withinMs;
    while ((this.leased.size > 0 || this.opening > 0) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
  }

  /** Closes the idle readers (those still lent are left to the process's end). */
  close() {
    for (const c of this.idle) c.closeSync();
    // Node calls every enabled AsyncLocalStorage for each promise the process makes, for as long
    // as the process lives: a closed database's must not stay among them.
    this.held.disable();
  }

  private async openReader(): Promise<DuckDBConnection> {
    this.opening++;
    try {
      const reader = await this.instance.connect();
      try {
        await reader.run(this.macros);
      } catch (error) {
        reader.closeSync();
        throw error;
      }
      return reader;
    } finally {
      this.opening--;
    }
  }

  private acquire(timeoutMs: number): Promise<DuckDBConnection> {
    if (this.stopRequested) return Promise.reject(shuttingDown());
    const c = this.idle.pop();
    if (c) return Promise.resolve(c);
    if (this.opened < this.readers) {
      this.opened++;
      return this.openReader().then(
        (reader) => {
          // Made while the pool stopped: closed here, before the instance closes (`close` waits for it).
          if (!this.stopRequested) return reader;
          reader.closeSync();
          throw shuttingDown();
        },
        (error: unknown) => {
          this.opened--;
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
          reject(shuttingDown());
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(
          unavailable(
            `All ${this.readers} read connections stayed busy for ${this.acquireTimeoutMs} ms; try again shortly`,
            1,
            'Server busy',
          ),
        );
      }, timeoutMs);
      this.waiting.push(waiter);
    });
  }

  private release(c: DuckDBConnection) {
    const next = this.waiting.shift();
    if (next) next.grant(c);
    else this.idle.push(c);
  }
}

/**
 * SQL endpoint queries hold at most `size` connections, so heavy analytical queries never take the
 * connections the API's own reads (GET /api/projects, name resolution) need: ten cross joins made a
 * GET wait 59 s. A query beyond the share waits for a slot, within the same deadline as for a
 * connection, then answers "server busy".
 */
class SqlShare {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly timeoutMs: number,
  ) {}

  take(): Promise<void> {
    if (this.held < this.size) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        this.held++;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(
          unavailable(
            `All ${this.size} connections for SQL queries stayed busy for ${this.timeoutMs} ms; try again shortly`,
            1,
            'Server busy',
          ),
        );
      }, this.timeoutMs);
      this.waiting.push(waiter);
    });
  }

  release() {
    this.held--;
    this.waiting.shift()?.();
  }
}
