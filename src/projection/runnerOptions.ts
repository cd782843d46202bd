/** How a projection runner follows the log, batches, waits and retries (each part takes its own). */
export type ProjectionRunnerOptions = {
  batchSize?: number;
  /** The pause before a batch nobody waits for, after another (see `pauseBeforeNextBatch`); default 10 ms. */
  batchPauseMs?: number;
  /**
   * A start at least this many positions behind the log logs its progress (`startServing`), at most
   * once per `progressEveryMs` (0: after every batch); defaults 10,000 and 5 s.
   */
  progressFromEvents?: number;
  progressEveryMs?: number;
  /** How often to look for events written by other processes; 0 disables polling. */
  pollMs?: number;
  /**
   * Also hear of other processes' commits as they happen (PostgreSQL LISTEN/NOTIFY), and catch up
   * at once; polling stays as the fallback for news lost on the way.
   */
  follow?: boolean;
  /** How long a writer waits for its own events to be projected before giving up. */
  waitTimeoutMs?: number;
  /** Longest pause between two attempts at an event that failed to project (they double up to it). */
  retryMaxMs?: number;
  /**
   * `<position>:<projection>` pairs: that projection passes over that event (PROJECTION_SKIP). The
   * list is part of the read model's fingerprint: a change to it rebuilds the tables, so a rebuild
   * equals the live model and dropping a pair once the projection is fixed brings the event in.
   */
  skip?: readonly string[];
};
