import type { RecordedEvent } from '../../events';
import { logStart, type EventLog, type LogCursor } from '../eventlog/types';
import { AppliedPositions, PositionWaiters } from './appliedPositions';

/**
 * Where the read model stands in the log: the cursor (the last batch committed), the id of the
 * event there, the positions applied (on PostgreSQL not all below the cursor) and the writers
 * waiting for theirs. The id is the log's identity: a log that no longer holds that event at that
 * position is not the one the tables were made from (`logMismatch`).
 */
export class LogPlace {
  private at: LogCursor = logStart;
  /** The id of the event at the cursor (the last one applied), null before the first. */
  private atEventId: string | null = null;
  readonly applied = new AppliedPositions();
  readonly waiters = new PositionWaiters();

  get cursor(): LogCursor {
    return this.at;
  }

  /** The tables stand at `cursor`, ending with the event `eventId` (a checkpoint read at start). */
  standAt(cursor: LogCursor, eventId: string | null) {
    this.at = cursor;
    this.atEventId = eventId;
  }

  /** A batch of `events` committed, ending at `cursor`. */
  moveTo(events: readonly RecordedEvent[], cursor: LogCursor) {
    this.at = cursor;
    this.atEventId = this.eventIdAt(events, cursor);
  }

  /** The id of the event the cursor stands at: one of the batch's, or the one it stood at before. */
  eventIdAt(events: readonly RecordedEvent[], cursor: LogCursor): string | null {
    for (let i = events.length - 1; i >= 0; i--)
      if (events[i]!.meta.position === cursor.position) return events[i]!.meta.eventId;
    return cursor.position === this.at.position ? this.atEventId : null;
  }

  /** Why the tables standing here cannot be `log`'s read model, or null when they can (`logMismatch`). */
  mismatchWith(log: Pick<EventLog, 'eventIdAt'>): Promise<string | null> {
    return logMismatch(log, this.at.position, this.atEventId);
  }
}

/**
 * Why tables that include the log up to `position`, ending with the event `eventId`, cannot be
 * this log's read model, or null when they can: the log must still hold that very event there. A
 * log restored from an older copy (shorter: its next writes would take positions the tables
 * claim to include, and be skipped as applied) or another log altogether does not.
 */
export const logMismatch = async (
  log: Pick<EventLog, 'eventIdAt'>,
  position: bigint,
  eventId: string | null,
): Promise<string | null> => {
  if (position === 0n) return null;
  const atPosition = await log.eventIdAt(position);
  if (atPosition === null)
    return `the read model includes the log up to event ${position}, which the log does not hold (a log restored from an older copy, or another log)`;
  if (eventId !== null && atPosition !== eventId)
    return `the read model's event ${position} is ${eventId}, the log's is ${atPosition} (another log, or one rewritten)`;
  return null;
};
