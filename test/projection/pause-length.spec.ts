import pino from 'pino';
import type { RecordedEvent } from '../../events';
import type { EventLog, LogCursor } from '../../src/eventlog/types';
import { FailureKeeper } from '../../src/projection/failureKeeper';
import { LogPlace } from '../../src/projection/logPlace';
import { LogTail } from '../../src/projection/tail';

/** The pause between batches nobody waits for, in these specs. */
const PAUSE_MS = 300;

/** An event at `position` (the tail reads positions and ids alone). */
const eventAt = (position: bigint) =>
  ({
    type: 'ProjectCreated',
    data: { name: `p${position}`, createdAt: '2026-01-01T00:00:00.000Z' },
    meta: { position, stream: `project-p${position}`, streamPosition: 1n, eventId: `e${position}` },
  }) as unknown as RecordedEvent;

/**
 * A log in memory (sole writer or not) and a tail over it, whose batches are recorded: what the
 * runner's tail does with its pauses, with nothing else (no background reads) to end them.
 */
const tailOver = (soleWriter: boolean) => {
  const events: RecordedEvent[] = [];
  const log = {
    kind: soleWriter ? 'sqlite' : 'postgres',
    soleWriter,
    readAll: async (after: LogCursor, limit: number) => {
      const next = events.filter((e) => e.meta.position > after.position).slice(0, limit);
      return {
        events: next,
        cursor: next.length ? { position: next.at(-1)!.meta.position, transactionId: null } : after,
      };
    },
    follow: () => async () => undefined,
  } as unknown as EventLog;
  const place = new LogPlace();
  const logger = pino({ level: 'silent' });
  const batches: bigint[][] = [];
  const tail: LogTail = new LogTail({
    log,
    logger,
    options: { batchPauseMs: PAUSE_MS },
    place,
    failures: new FailureKeeper({
      logger,
      skip: undefined,
      retryMaxMs: 1000,
      waiters: place.waiters,
      noticeFailure: () => undefined,
      stopped: () => tail.stopped,
      retry: async () => undefined,
    }),
    write: async (batch, cursor) => {
      batches.push(batch.map((e) => e.meta.position));
      place.moveTo(batch, cursor);
      for (const e of batch) {
        place.applied.add(e.meta.position);
        place.waiters.reached(e.meta.position);
      }
      return true;
    },
  });
  const append = (position: bigint) => {
    events.push(eventAt(position));
    tail.soon();
  };
  const batchWritten = async (count: number) => {
    while (batches.length < count) await new Promise((r) => setTimeout(r, 2));
  };
  return { tail, append, batches, batchWritten };
};

describe('how long the runner pauses after a batch nobody waited for', () => {
  it('given a sole writer (SQLite), when an event is appended right after a batch, then it is in no batch two pauses later, and a wait for it ends the pause at once', async () => {
    const { tail, append, batches, batchWritten } = tailOver(true);
    try {
      append(1n);
      await batchWritten(1);
      append(2n);
      // A sole writer pauses eight pauses: nothing else can arrive, and every read that needs 2 waits for it.
      await new Promise((r) => setTimeout(r, 2 * PAUSE_MS));
      expect(batches).toEqual([[1n]]);
      await tail.waitFor(2n, 60_000);
      expect(batches).toEqual([[1n], [2n]]);
    } finally {
      await tail.stop();
    }
  });

  it('given a shared log (PostgreSQL), when an event is appended right after a batch, then the runner writes it on its own after one pause, nobody waiting', async () => {
    const { tail, append, batches, batchWritten } = tailOver(false);
    try {
      append(1n);
      await batchWritten(1);
      append(2n);
      await batchWritten(2);
      expect(batches).toEqual([[1n], [2n]]);
    } finally {
      await tail.stop();
    }
  });
});
