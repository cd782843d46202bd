import type { Logger } from 'pino';
import type { RecordedEvent } from '../../events';
import { cursorPassed, type EventLog, type LogCursor, type LogNews } from '../eventlog/types';
import type { FailureKeeper } from './failureKeeper';
import type { LogPlace } from './logPlace';
import type { ProjectionRunnerOptions } from './runnerOptions';

/** Longest pause between looks for an announced transaction the log does not show yet. */
const CHASE_MAX_MS = 100;

/**
 * How many pauses a sole writer's runner waits after a batch nobody waited for (see
 * `pauseBeforeNextBatch`). A batch costs DuckDB's threads about a millisecond per table it writes
 * whatever its rows, and most of its price is that: MCP calls recorded eight at a time (as
 * bench/mcp.bench.ts makes them, in process) made batches of 25-32 events with one pause, 53-58
 * with eight (background reads ending some pauses), and their DuckDB threads' time per call fell
 * from 1.39-1.44 ms to 0.86-0.93 (at load 8).
 */
const SOLE_WRITER_PAUSES = 8;

/** The next batch, read while this one is written when the log holds more than a batch. */
type ReadAhead = { next?: { from: LogCursor; read: ReturnType<EventLog['readAll']> } };

/** What one turn of the loop came to: go on reading, stop reading for now, or stop (the runner is). */
type Turn = 'more' | 'done' | 'stopped';

/**
 * Follows the log in order: reads what is new from the cursor and hands it to `write` a batch at a
 * time, on news from the log (its notifications, polling), on waits and on catch-ups. Batches
 * nobody waits for are paused between, so what trickles in goes into fewer of them; a transaction
 * announced but not readable yet is chased. The loop is one at a time: calls meanwhile join it.
 */
export class LogTail {
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private unfollow: (() => Promise<void>) | null = null;
  /** The newest transaction announced that this runner has not read yet (see `chase`). */
  private announced: string | null = null;
  /** The log's notifications dropped and are not back yet (logged once per loss). */
  private notificationsLost = false;
  private chaseTimer: NodeJS.Timeout | null = null;
  private chaseDelayMs = 0;
  private lingerTimer: NodeJS.Timeout | null = null;
  /** Someone called `catchUp`: the loop reads until nothing is left, without pausing. */
  private wanted = false;
  private stopRequested = false;
  private held: { released: Promise<void>; release: () => void; arrive: () => void } | null = null;

  constructor(
    private readonly deps: {
      log: EventLog;
      logger: Logger;
      options: Pick<ProjectionRunnerOptions, 'batchSize' | 'batchPauseMs' | 'pollMs' | 'follow'>;
      place: LogPlace;
      failures: FailureKeeper;
      /**
       * Writes a batch read from the log (the cursor moves once it committed). False: nothing
       * written, the tables no longer stand at `from` (see `BatchWriter.write`).
       */
      write: (events: readonly RecordedEvent[], cursor: LogCursor, from: LogCursor) => Promise<boolean>;
    },
  ) {}

  /** Whether `stop` was called. */
  get stopped(): boolean {
    return this.stopRequested;
  }

  /** See `ProjectionRunner.hold`. */
  hold(): { release: () => void; reached: Promise<void> } {
    let release!: () => void;
    let arrive!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const reached = new Promise<void>((r) => (arrive = r));
    const held = { released, release, arrive };
    this.held = held;
    return {
      reached,
      release: () => {
        if (this.held === held) this.held = null;
        release();
        // Goes on as it would have: a batch nobody waits for is followed by a pause.
        void this.follow().catch(() => undefined);
      },
    };
  }

  /**
   * Catches up now, unless the runner is pausing between batches (`pauseBeforeNextBatch`): then the
   * next batch, due shortly, takes this news too.
   */
  soon() {
    if (this.lingerTimer || this.stopRequested) return;
    void this.follow().catch(() => undefined);
  }

  /** See `ProjectionRunner.catchUp`. */
  catchUp(): Promise<void> {
    this.wanted = true;
    return this.follow();
  }

  /** See `ProjectionRunner.waitFor`. */
  waitFor(position: bigint, timeoutMs: number): Promise<void> {
    const { place, failures } = this.deps;
    if (place.applied.has(position)) return Promise.resolve();
    const stalled = failures.stalled(position);
    if (stalled) return Promise.reject(stalled);
    const waiting = place.waiters.wait(position, timeoutMs);
    // Reads at once, pause or not, until no waiter is left; then batches pause again. (Not
    // catchUp: it reads until a read finds nothing, which under steady writes never happens, so
    // one wait would end the pauses for good and DuckDB would write a batch per event or two.)
    void this.follow().catch(() => undefined);
    return waiting;
  }

  /** Looks for other processes' events: every `pollMs`, and on the log's news when following it. */
  startPolling() {
    const pollMs = this.deps.options.pollMs ?? 0;
    if (pollMs > 0 && !this.timer) {
      this.timer = setInterval(() => this.soon(), pollMs);
      this.timer.unref();
    }
    if (this.deps.options.follow && !this.unfollow) this.unfollow = this.deps.log.follow(this.heard);
  }

  /** Resolves once no batch is being written (a rebuild waits for it). */
  async settled(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  /** Stops following the log; resolves once no batch is being written. */
  async stop(): Promise<void> {
    this.stopRequested = true;
    if (this.timer) clearInterval(this.timer);
    if (this.chaseTimer) clearTimeout(this.chaseTimer);
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    void this.unfollow?.();
    this.unfollow = null;
    this.deps.failures.cancelRetry();
    this.held?.release();
    this.held = null;
    this.deps.place.waiters.releaseAll();
    await this.settled();
  }

  /**
   * After a batch nobody waited for, the next one waits `batchPauseMs`, so that what is appended
   * meanwhile goes into it: DuckDB's price is mostly per batch, and a runner that read again at
   * once wrote a batch per event or two as a single client's writes trickled in (about 10 ms of
   * CPU each). Anyone waiting for a position (`waitFor`: a read after a write answered ahead, a
   * writer waiting for its row) still makes it go at once.
   *
   * A log's sole writer (SQLite) waits `SOLE_WRITER_PAUSES` times as long: nothing it does not
   * append can arrive meanwhile, and every read of this process that needs what it appended waits
   * for it (and so ends the pause), so a longer pause keeps nobody from anything. A shared log's
   * runner also hears other processes' commits, which a pause defers (`soon`): it keeps one pause.
   */
  private pauseBeforeNextBatch() {
    if (this.lingerTimer || this.stopRequested) return;
    const pause = this.deps.options.batchPauseMs ?? 10;
    this.lingerTimer = setTimeout(
      () => {
        this.lingerTimer = null;
        void this.follow().catch(() => undefined);
      },
      this.deps.log.soleWriter ? pause * SOLE_WRITER_PAUSES : pause,
    );
    this.lingerTimer.unref();
  }

  /** News from the log: another process committed, or the news feed (re)started or dropped. */
  private heard = (news: LogNews) => {
    if (this.stopRequested) return;
    switch (news.kind) {
      case 'committed':
        // Usually this process's own append, read already by the writer waiting for it.
        if (cursorPassed(this.deps.place.cursor, news.transactionId)) return;
        if (this.announced === null || BigInt(news.transactionId) > BigInt(this.announced))
          this.announced = news.transactionId;
        break;
      case 'listening':
        if (this.notificationsLost) this.deps.logger.warn('log notifications back: listening again');
        this.notificationsLost = false;
        this.deps.failures.logAnswersAgain();
        break;
      case 'lost':
        // Once per loss (the feed reconnects with back-off; each failed attempt is another 'lost').
        if (!this.notificationsLost)
          this.deps.logger.warn(
            { error: news.error },
            'log notifications lost: polling alone until they are back',
          );
        this.notificationsLost = true;
        return;
      default: {
        const unknown: never = news;
        return unknown;
      }
    }
    this.chaseDelayMs = 0;
    this.soon();
  };

  /**
   * A transaction announced as committed may not be readable yet: the tailer reads only behind
   * every transaction still running (see readAll), and an older one anywhere on the server may
   * still be open. Look again soon, backing off, rather than wait for the next poll.
   */
  private chase() {
    if (this.announced === null) return;
    if (cursorPassed(this.deps.place.cursor, this.announced)) {
      this.announced = null;
      return;
    }
    // A catch-up is due shortly anyway: it will read the announced transaction if it can.
    if (this.deps.failures.failure || this.stopRequested || this.chaseTimer || this.lingerTimer) return;
    this.chaseDelayMs = Math.min(CHASE_MAX_MS, Math.max(1, this.chaseDelayMs * 2));
    this.chaseTimer = setTimeout(() => {
      this.chaseTimer = null;
      void this.follow().catch(() => undefined);
    }, this.chaseDelayMs);
    this.chaseTimer.unref();
  }

  /**
   * Reads and applies what is new, pausing between batches nobody waits for (news from the log,
   * timers): the loop `catchUp` runs too, without its promise to read until nothing is left.
   */
  private follow(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const refusal = this.deps.failures.refusal();
    if (refusal) return Promise.reject(refusal);
    this.running = (async () => {
      const ahead: ReadAhead = {};
      try {
        do {
          this.again = false;
          for (;;) {
            if (this.stopRequested) return;
            const turn = await this.nextBatch(ahead);
            if (turn === 'stopped') return;
            if (turn === 'done') break;
          }
        } while (this.again);
        this.chase();
      } catch (error) {
        this.deps.failures.record(error);
        throw error;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** Reads the next batch and writes it: one turn of `follow`'s loop. */
  private async nextBatch(ahead: ReadAhead): Promise<Turn> {
    const { log, place, failures } = this.deps;
    const limit = failures.batchLimit(this.deps.options.batchSize ?? 1000);
    // Read ahead from where the last batch ended: good only if that batch was written (a
    // failed one leaves the cursor where it was, and only then do batches shrink to one).
    const from = place.cursor;
    const read = ahead.next?.from === from ? ahead.next.read : log.readAll(from, limit);
    ahead.next = undefined;
    const { events, cursor } = await read;
    if (events.length === 0) {
      this.wanted = false;
      // Caught up: the log answered and nothing is left to apply, so nothing is failing. (A
      // failed read of the log cleared only by a batch applied stayed failed when no event
      // came: its writes refused, two nodes on one log each waited for the other's.)
      failures.recovered();
      return 'done';
    }
    // Checked after the read: a read already under way when the runner was held may have
    // returned events appended after that, which must wait too.
    while (this.held) {
      this.held.arrive();
      await this.held.released;
    }
    if (this.stopRequested) return 'stopped';
    // A full batch: more is waiting (a replay, a start after a while away). The log reads
    // the next batch while DuckDB writes this one; live batches, smaller, are read after.
    if (events.length === limit && !failures.isolatingOne) {
      const next = log.readAll(cursor, limit);
      next.catch(() => undefined);
      ahead.next = { from: cursor, read: next };
    }
    try {
      // A rebuild made the tables again while this batch was read: read from where they stand.
      if (!(await this.deps.write(events, cursor, from))) return 'more';
    } catch (error) {
      if (failures.isolateAfter(error, events.length)) return 'more';
      throw error;
    }
    failures.batchApplied();
    // Caught up with what there was, and nobody waits: let more arrive before the next
    // batch (see `soon`) rather than write one per event or two as they trickle in.
    if (events.length < limit && !failures.isolatingOne && !this.wanted && !place.waiters.any()) {
      this.again = false;
      this.pauseBeforeNextBatch();
      return 'done';
    }
    return 'more';
  }
}
