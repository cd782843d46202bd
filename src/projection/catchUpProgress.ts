/** How far a long catch-up (a rebuild, a start far behind the log) has come. */
export type CatchUpProgress = {
  readonly applied: number;
  /** The events there were to apply when it began (on PostgreSQL, positions: gaps make it an upper bound). */
  readonly total: number;
  readonly eventsPerSecond: number;
  /** At the rate so far; null until something is applied. */
  readonly secondsLeft: number | null;
};

/** A batch done: only its size is read (the runner hands its events, a verification `{ length }`). */
type Done = { readonly length: number };

/**
 * Counts the events applied while a catch-up runs and reports its progress after a batch, at most
 * once per `everyMs` (0: after every batch). The CLIs draw it (src/cli/progress.ts: replay, and
 * verify's events verified); the service logs it, so an operator starting on a long log sees the
 * read model coming rather than a silent wait.
 * `stop` unsubscribes and gives the final figures.
 */
export const watchCatchUp = (
  onApplied: (listener: (batch: Done) => void) => () => void,
  total: number,
  report: (progress: CatchUpProgress) => void,
  everyMs: number,
  now: () => number = Date.now,
) => {
  const started = now();
  let applied = 0;
  let reported = started;
  const progress = (): CatchUpProgress => {
    const eventsPerSecond = Math.round((applied / Math.max(now() - started, 1)) * 1000);
    return {
      applied,
      total,
      eventsPerSecond,
      secondsLeft: eventsPerSecond > 0 ? Math.max(0, Math.round((total - applied) / eventsPerSecond)) : null,
    };
  };
  const unsubscribe = onApplied((batch) => {
    applied += batch.length;
    if (now() - reported < everyMs) return;
    reported = now();
    report(progress());
  });
  return {
    stop: (): CatchUpProgress => {
      unsubscribe();
      return progress();
    },
  };
};
