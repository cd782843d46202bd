import type { EventLog } from './types';

export type LogHead = Awaited<ReturnType<EventLog['head']>>;

/** The log did not answer `head()` in time (a database down, or a lock held too long). */
export class LogHeadTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the event log did not answer within ${timeoutMs} ms`);
    this.name = 'LogHeadTimeout';
  }
}

/**
 * `asked`'s answer, or a `LogHeadTimeout` once `timeoutMs` pass: a probe never waits longer for a
 * log that hangs (the question itself goes on; its late answer is dropped).
 */
export const logAnswerWithin = <T>(asked: Promise<T>, timeoutMs: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new LogHeadTimeout(timeoutMs)), timeoutMs);
    timer.unref();
    asked.then(
      (answer) => {
        clearTimeout(timer);
        resolve(answer);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });

/**
 * The log's head as the operator's probes ask for it (readiness checks, metrics scrapes), shared:
 * `head()` counts the log's events, a scan that grows with the log, so callers within `maxAgeMs` of
 * each other share one answer (and one query in flight), and a log that hangs answers a timeout
 * instead of holding the probe. A failed or timed-out answer is not kept: the next call asks again.
 * A caller that knows the head is at least somewhere (the read model's own position) passes it: a
 * shared answer below it is stale, and the log is asked again.
 */
export const logHeadProbe = (
  log: Pick<EventLog, 'head'>,
  options: { maxAgeMs: number; timeoutMs: number },
): ((atLeast?: bigint) => Promise<LogHead>) => {
  type Asked = { head: Promise<LogHead>; answer: { head: LogHead; at: number } | null };
  /** The last question: shared while in flight, then for `maxAgeMs` after its answer came. */
  let last: Asked | null = null;
  /**
   * The query itself, while it runs: a log that hangs gets one at a time, however often the probes
   * ask (each answers its own timeout), so hung queries do not pile up on the log's connections.
   */
  let running: Promise<LogHead> | null = null;
  const query = () => {
    running ??= log.head().finally(() => (running = null));
    return running;
  };
  const ask = () => logAnswerWithin(query(), options.timeoutMs);
  const usable = (asked: Asked, atLeast: bigint) =>
    asked.answer === null ||
    (Date.now() - asked.answer.at <= options.maxAgeMs && asked.answer.head.position >= atLeast);
  return (atLeast = 0n) => {
    if (last && usable(last, atLeast)) return last.head;
    const asked: Asked = { head: ask(), answer: null };
    last = asked;
    asked.head.then(
      (head) => (asked.answer = { head, at: Date.now() }),
      () => {
        if (last === asked) last = null;
      },
    );
    return asked.head;
  };
};
