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
  /** Queries that may wait outside at once (see `waitingOutside`; default: four times the SQL share). */
  outsideReaders?: number;
};

/**
 * How long a query back from outside may wait for its SQL slot, what ends that wait sooner, and
 * who hears when it could not take one (the chain must not use its connection on: it is stopped).
 */
export type BackFromOutside = {
  /**
   * The work copies rows into the heap (an integration's table, read before it is loaded): such
   * works take turns, no more at once than the SQL share has slots, as when each held a slot (a
   * fetch may hold up to a million rows), not `outsideReaders` (28 by default) at once.
   */
  rows?: boolean;
  withinMs: () => number;
  signal?: AbortSignal;
  lost?: (error: unknown) => void;
};

/**
 * One call chain's hold on a reader. `slot`: it holds one of the SQL share's slots now; `outside`:
 * it waits on work outside the process (`waitingOutside`), its connection not counted among the
 * readers others may open.
 */
type Lease = {
  connection: DuckDBConnection;
  ended: boolean;
  slot: boolean;
  outside: boolean;
  /** Outside copying rows into the heap (`BackFromOutside.rows`). */
  rows: boolean;
  /**
   * Calls running on this lease from within its holder (`withReader` again, e.g. a catalog
   * describing a knowledge base's columns inside a query's planning): their waits outside keep the
   * slot, as the holder cannot go on without them and they have deadlines of their own.
   */
  nested: number;
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
  private readonly sqlShare: Slots;
  /**
   * The reader this async call chain already holds. A read made while holding one (a query that
   * resolves names through a service, which reads too) runs on it: asking the pool for a second
   * connection would wait on itself once every connection is held that way, and hang for good.
   * Work started inside and outliving the holder (a background task) finds the lease ended and
   * takes a connection of its own.
   */
  private readonly held = new AsyncLocalStorage<Lease>();
  private readonly leased = new Set<DuckDBConnection>();
  /** Leases waiting outside now (`waitingOutside`), and how many may at once. */
  private outside = 0;
  private readonly outsideReaders: number;
  /**
   * Turns for leases outside copying rows into the heap (`BackFromOutside.rows`), as many as the SQL
   * share's slots: taken once outside (so no slot is held while waiting for one), given back once
   * the SQL slot is taken again.
   */
  private readonly rowsShare: Slots;

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
    this.sqlShare = new Slots(
      Math.max(1, Math.min(this.readers, options.sqlReaders ?? defaultSqlReaders(this.readers))),
    );
    this.rowsShare = new Slots(
      this.sqlShare.size,
      (size, ms) =>
        `All ${size} turns for copying integrations' rows into memory (SQL_MAX_CONCURRENT) stayed taken for ${ms} ms; try again shortly`,
    );
    this.outsideReaders = options.outsideReaders ?? 4 * this.sqlShare.size;
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
    if (lease && !lease.ended) {
      lease.nested++;
      try {
        return await work(lease.connection);
      } finally {
        lease.nested--;
      }
    }
    const started = Date.now();
    if (lane.sql) await this.sqlShare.take(this.acquireTimeoutMs);
    let c: DuckDBConnection;
    try {
      c = await this.acquire(Math.max(1, this.acquireTimeoutMs - (Date.now() - started)));
    } catch (error) {
      if (lane.sql) this.sqlShare.release();
      throw error;
    }
    const mine: Lease = {
      connection: c,
      ended: false,
      slot: lane.sql === true,
      outside: false,
      rows: false,
      nested: 0,
    };
    this.leased.add(c);
    try {
      return await this.held.run(mine, () => work(c));
    } catch (error) {
      this.noticeFailure(error);
      throw error;
    } finally {
      mine.ended = true;
      // A lease ends holding its slot, or outside (back from a wait that could not take it again).
      if (mine.outside) this.comeBack(mine);
      if (mine.slot) {
        mine.slot = false;
        this.sqlShare.release();
      }
      this.leased.delete(c);
      this.release(c);
    }
  }

  /**
   * See `Duck.waitingOutside`. While `work` runs (detached: a read it makes takes a reader of its
   * own), the call chain's lease gives its SQL slot back and its connection stops counting among
   * the readers others may open; afterwards it takes a slot again, within `back`, before the chain
   * uses its connection again. At most `outsideReaders` leases wait outside at once: each keeps its
   * connection, with the temporary tables the query made, and what it fetches meanwhile (an
   * integration's rows) is held in the heap until it is loaded. A wait started while the lease
   * already waits outside (two at once) just runs: the first to end takes the slot again.
   */
  async waitingOutside<T>(work: () => Promise<T>, back: BackFromOutside): Promise<T> {
    const lease = this.held.getStore();
    if (!lease || lease.ended || lease.outside) return this.held.exit(work);
    // Within a call nested in the holder (see `Lease.nested`): as before, on the lease, slot kept.
    if (lease.nested > 0) return work();
    if (this.outside >= this.outsideReaders)
      throw unavailable(
        `${this.outsideReaders} queries already wait on services outside (LLM providers, integrations, SQL_MAX_WAITING_OUTSIDE); try again shortly`,
        1,
        'Server busy',
      );
    this.goOutside(lease);
    let outcome: { value: T } | { error: unknown };
    try {
      // A turn to copy rows is waited for outside: a chain holding a slot never waits on one.
      if (back.rows) {
        await this.rowsShare.take(Math.max(1, back.withinMs()), { signal: back.signal });
        lease.rows = true;
      }
      outcome = { value: await this.held.exit(work) };
    } catch (error) {
      outcome = { error };
    }
    try {
      await this.takeSlotBack(lease, back);
    } catch (error) {
      // The lease stays outside (no slot) until it ends; the work's own failure says more.
      back.lost?.(error);
      throw 'error' in outcome ? outcome.error : error;
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  /** What the pool's readers are doing now (for gauges and specs). */
  use(): {
    lent: number;
    outside: number;
    rowsOutside: number;
    sqlSlots: number;
    idle: number;
    opened: number;
  } {
    return {
      lent: this.leased.size,
      outside: this.outside,
      rowsOutside: this.rowsShare.taken,
      sqlSlots: this.sqlShare.taken,
      idle: this.idle.length,
      opened: this.opened,
    };
  }

  private goOutside(lease: Lease) {
    lease.outside = true;
    this.outside++;
    if (lease.slot) {
      lease.slot = false;
      this.sqlShare.release();
    }
    // Its connection no longer counts: a read waiting for one may have a reader made (there is
    // room now, so `acquire` makes one) and handed on.
    if (this.waiting.length > 0 && this.opened - this.outside < this.readers)
      this.acquire(this.acquireTimeoutMs).then(
        (reader) => this.release(reader),
        () => undefined,
      );
  }

  private comeBack(lease: Lease) {
    lease.outside = false;
    this.outside--;
    if (lease.rows) this.rowsShare.release();
    lease.rows = false;
  }

  /**
   * The slot again, ahead of queries not yet started: a query back from outside has done its outside
   * work. Its connection counts again once it has the slot; the pool may then hold a reader more
   * than `readers` for a while (`release` closes it).
   */
  private async takeSlotBack(lease: Lease, back: BackFromOutside) {
    if (this.stopRequested) throw shuttingDown();
    if (lease.ended) return;
    await this.sqlShare.take(Math.max(1, back.withinMs()), { first: true, signal: back.signal });
    if (lease.ended) {
      this.sqlShare.release();
      return;
    }
    lease.slot = true;
    this.comeBack(lease);
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
    this.sqlShare.refuseAll(shuttingDown);
    this.rowsShare.refuseAll(shuttingDown);
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
    // Connections waiting outside do not count (see `waitingOutside`).
    if (this.opened - this.outside < this.readers) {
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
    // One made while another waited outside, now back: the pool keeps `readers` counted ones.
    if (this.opened - this.outside > this.readers) {
      this.opened--;
      c.closeSync();
      return;
    }
    const next = this.waiting.shift();
    if (next) next.grant(c);
    else this.idle.push(c);
  }
}

/**
 * At most `size` holders at once; one more waits (within its time, or until aborted), then answers
 * "server busy". The SQL share: SQL endpoint queries hold at most `size` connections, so heavy
 * analytical queries never take the connections the API's own reads (GET /api/projects, name
 * resolution) need: ten cross joins made a GET wait 59 s. The rows share: turns for copying an
 * integration's rows into the heap (`BackFromOutside.rows`).
 */
class Slots {
  private held = 0;
  private readonly waiting: { grant: () => void; refuse: (error: Error) => void }[] = [];
  private refusal: (() => Error) | undefined;

  constructor(
    readonly size: number,
    /** What a wait past its time answers (as "server busy", 1040). */
    private readonly busy: (size: number, ms: number) => string = (size, ms) =>
      `All ${size} connections for SQL queries stayed busy for ${ms} ms; try again shortly`,
  ) {}

  /** Slots held now. */
  get taken(): number {
    return this.held;
  }

  /**
   * A slot, waiting at most `withinMs`. `first`: ahead of those waiting (a query back from
   * outside); `signal`: the wait ends when it aborts (the query was interrupted meanwhile).
   */
  take(withinMs: number, options: { first?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    if (this.refusal) return Promise.reject(this.refusal());
    if (this.held < this.size) {
      this.held++;
      return Promise.resolve();
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(interruptedWhileWaiting());
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
      };
      const waiter = {
        grant: () => {
          leave();
          this.held++;
          resolve();
        },
        refuse: (error: Error) => {
          leave();
          reject(error);
        },
      };
      const aborted = () => waiter.refuse(interruptedWhileWaiting());
      const timer = setTimeout(
        () => waiter.refuse(unavailable(this.busy(this.size, withinMs), 1, 'Server busy')),
        withinMs,
      );
      signal?.addEventListener('abort', aborted);
      if (options.first) this.waiting.unshift(waiter);
      else this.waiting.push(waiter);
    });
  }

  release() {
    this.held--;
    this.waiting[0]?.grant();
  }

  /** Refuses those waiting, and every later take, with `error` (a shutdown). */
  refuseAll(error: () => Error) {
    this.refusal = error;
    for (const waiter of [...this.waiting]) waiter.refuse(error());
  }
}

const interruptedWhileWaiting = () => new Error('The query was interrupted while it waited for a SQL slot');
