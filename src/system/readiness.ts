import type { LogHead } from '../eventlog/headProbe';
import {
  describeFailure,
  positionAgainst,
  retryAfterSeconds as retryOf,
  type ProjectionFailure,
} from '../projection/runner';

/** What readiness reads: the log's head, and where this process's read model stands. */
type ReadinessProbe = {
  /** The log's head, at least `atLeast` (what the read model already includes). */
  head(atLeast: bigint): Promise<LogHead>;
  /** The read model's cursor: the last event it read. */
  position(): bigint;
  /**
   * The highest position through which the read model includes every event the log shows (past
   * the cursor on PostgreSQL, after commits out of position order); asked when the head stands
   * past the cursor. It may fail or time out: the cursor stands.
   */
  appliedThrough(): Promise<bigint>;
  failure(): ProjectionFailure | null;
  /**
   * Null when the log still holds the last event the read model applied; otherwise why not (the
   * read model is then rebuilt from the log). Asked when the head stands below the read model.
   */
  belongsToLog(): Promise<string | null>;
  /** The reason while the read model is rebuilt for not belonging to the log; null otherwise. */
  rebuildingForLog(): string | null;
  /** How many log positions the read model may trail the head by and still take traffic. */
  readonly maxLag: number;
};

export type Readiness =
  | { ready: true; position: bigint; head: bigint; lag: number }
  | {
      ready: false;
      /** Each thing that is not ready, in words an operator can act on. */
      reasons: string[];
      /** When asking again may help, in seconds (a stopped read model knows its next attempt). */
      retryAfterSeconds: number;
      /** Why the log did not answer, for the server log only (it may name hosts). */
      logError?: unknown;
    };

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Ready means this process answers reads as the log stands: its read model is not stopped at an
 * event it cannot apply, the event log answers, and the read model trails the log's head by at
 * most `maxLag` positions (another process's writes reach it within PROJECTION_POLL_MS).
 */
export const readinessOf = async (probe: ReadinessProbe): Promise<Readiness> => {
  const reasons: string[] = [];
  let retryAfterSeconds = 1;
  const failure = probe.failure();
  if (failure) {
    const at = failure.position === null ? '' : ` at event ${failure.position}`;
    reasons.push(`the read model is stopped${at}: ${describeFailure(failure)}`);
    retryAfterSeconds = retryOf(failure);
  }
  const cursor = probe.position();
  let head: LogHead;
  try {
    head = await probe.head(cursor);
  } catch (logError) {
    reasons.push('the event log does not answer');
    return { ready: false, reasons, retryAfterSeconds, logError };
  }
  const rebuilding = probe.rebuildingForLog();
  if (rebuilding) reasons.push(`${rebuilding}: rebuilding the read model from the log`);
  else if (head.position < cursor) {
    // A log behind its read model: on PostgreSQL a moment's horizon, or an older log restored under
    // it, whose next writes would take positions the read model claims to include.
    let mismatch: string | null;
    try {
      mismatch = await probe.belongsToLog();
    } catch (logError) {
      reasons.push('the event log does not answer');
      return { ready: false, reasons, retryAfterSeconds, logError };
    }
    if (mismatch) reasons.push(`${mismatch}: rebuilding the read model from the log`);
  }
  const position = await positionAgainst(head.position, cursor, probe.appliedThrough);
  const lag = Number(head.position - position);
  if (lag > probe.maxLag)
    reasons.push(
      `the read model is ${count(lag)} event${lag === 1 ? '' : 's'} behind the log (at ${position}, the log at ${head.position}; READY_MAX_LAG_EVENTS is ${count(probe.maxLag)})`,
    );
  if (reasons.length > 0) return { ready: false, reasons, retryAfterSeconds };
  return { ready: true, position, head: head.position, lag: Math.max(0, lag) };
};
