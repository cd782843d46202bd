import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { RecordedEvent } from '../../events';
import { AppendedTail } from '../../src/eventlog/appendedTail';
import { openSqliteLog } from '../../src/eventlog/sqlite';
import { StreamVersionConflict, type LogCursor, type NewEvent } from '../../src/eventlog/types';
import type { RequestContext } from '../../src/shared/requestContext';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

// The embedded log answers the read model's reads of what it just appended from memory. The promise:
// every read answers exactly what a read of the stored rows answers (the same events, texts parsed
// the same way, the same metadata), whatever was appended, whatever was refused, from any position,
// with any limit, and whether or not the memory still holds that far back.
// Beside it, a kill check: a tail that answers "nothing after it" to a reader older than what it
// holds (rather than sending it to the log) is caught at the count `npm test` runs.

const clock = () => new Date('2026-01-01T00:00:00.000Z');
const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-tail-')), 'events.sqlite');

// Names and params as clients send them: quotes, backslashes, newlines, emoji, every plane,
// numbers JSON writes differently from how they were given (-0, 1e21, 5e-324). No NUL and no lone
// surrogate: the contract refuses both before anything is stored.
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => s.split('\u0000').join('').toWellFormed()),
  fc.constantFrom(
    '',
    "it's",
    'back\\slash',
    'line\nbreak',
    '😀 emoji',
    '\udbff\udfff plane 16',
    '{"json":"text"}',
  ),
);
const jsonValue = fc.oneof(
  text,
  fc.constantFrom(-0, 1e21, 5e-324, 2 ** 53 + 1, 0.1 + 0.2, true, false, null),
  fc.integer(),
  fc.array(fc.oneof(text, fc.integer(), fc.constant(null)), { maxLength: 3 }),
);
const params = fc.dictionary(text, jsonValue, { maxKeys: 4 });

const skillCreated = fc.record({ name: text, params }).map(({ name, params }): NewEvent => ({
  type: 'SkillCreated',
  data: { projectId: 1, project: 'p', name, type: 'text', params, createdAt: '2026-01-01T00:00:00.000Z' },
}));

const cause: RequestContext = {
  requestId: 'req-1',
  interface: 'rest',
  actor: { kind: 'user', id: 'ann' },
};

type Step =
  | {
      kind: 'append';
      stream: string;
      events: NewEvent[];
      expect: 'current' | 'behind' | 'ahead';
      withCause: boolean;
    }
  | { kind: 'read'; back: number; limit: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    stream: fc.constantFrom('project-a', 'project-b', 'project-c'),
    events: fc.array(skillCreated, { minLength: 1, maxLength: 4 }),
    // An append expecting a version the stream does not have is refused and stores nothing (and
    // the stream takes the next append that expects its version).
    expect: fc.constantFrom('current' as const, 'current' as const, 'behind' as const, 'ahead' as const),
    withCause: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('read' as const),
    // How far behind the head the reader stands (past the start: from the start).
    back: fc.nat({ max: 30 }),
    limit: fc.integer({ min: 1, max: 8 }),
  }),
);

const steps = fc.array(step, { minLength: 1, maxLength: 25 });
const tailSize = fc.integer({ min: 1, max: 12 });

/** Runs the steps on a log whose tail holds `tailSize` events; each read equals a query of the stored rows. */
const readsAsStored = async (steps: Step[], tailSize: number) => {
  const file = tempFile();
  const log = await openSqliteLog(file, clock, { appendedTailSize: tailSize });
  const versions = new Map<string, bigint>();
  const reads: { after: LogCursor; limit: number; head: bigint; events: RecordedEvent[] }[] = [];
  let head = 0n;
  try {
    for (const s of steps) {
      if (s.kind === 'read') {
        const position = head - BigInt(s.back) > 0n ? head - BigInt(s.back) : 0n;
        const after = { position, transactionId: null };
        reads.push({
          after,
          limit: s.limit,
          head,
          events: (await log.readAll(after, s.limit)).events,
        });
        continue;
      }
      const version = versions.get(s.stream) ?? 0n;
      const causes = s.withCause ? s.events.map(() => cause) : undefined;
      if (s.expect !== 'current') {
        const wrong = s.expect === 'behind' && version > 0n ? version - 1n : version + 1n;
        await expect(log.append(s.stream, s.events, wrong, causes)).rejects.toThrow(StreamVersionConflict);
        continue;
      }
      const result = await log.append(s.stream, s.events, version, causes);
      versions.set(s.stream, result.streamVersion);
      head = result.lastPosition;
      // What the append answers is what is stored, too.
      reads.push({
        after: { position: head - BigInt(s.events.length), transactionId: null },
        limit: 100,
        head,
        events: [...result.events],
      });
    }
  } finally {
    await log.close();
  }
  // Opened again, the log holds nothing in memory: every read is a query (of what was
  // stored when the read ran: the events up to the head then).
  const stored = await openSqliteLog(file, clock);
  try {
    for (const r of reads)
      expect(r.events).toStrictEqual(
        (await stored.readAll(r.after, r.limit)).events.filter((e) => e.meta.position <= r.head),
      );
  } finally {
    await stored.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
};

describe('the embedded log, read right after its appends', () => {
  it('reads from memory exactly what a read of the stored rows gives', async () => {
    await fc.assert(fc.asyncProperty(steps, tailSize, readsAsStored), {
      seed: propertySeed(),
      numRuns: propertyRuns(40),
    });
  });

  it('kill check: a reader older than the tail answered "nothing after it" is caught', async () => {
    const after = AppendedTail.prototype.after;
    // The tail's answer for a reader it cannot answer (undefined: ask the log) taken for an empty batch.
    const spy = jest.spyOn(AppendedTail.prototype, 'after').mockImplementation(function (
      this: AppendedTail<{ position: bigint }>,
      position,
      limit,
    ) {
      return after.call(this, position, limit) ?? [];
    });
    try {
      await expectCaught(fc.asyncProperty(steps, tailSize, readsAsStored), {
        seed: propertySeed(),
        numRuns: propertyRuns(40),
      });
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the appended tail', () => {
  const row = (position: bigint) => ({ position });

  it('answers from its floor on, and not for a position older than what it holds', () => {
    // Given a tail over a log whose head was 10, holding at most 3 rows
    const tail = new AppendedTail(10n, 3);
    // When 11..14 are appended (11 falls out)
    tail.add([row(11n), row(12n)]);
    tail.add([row(13n), row(14n)]);
    // Then a reader at 11 or later is answered, in order, up to its limit
    expect(tail.after(11n, 10)?.map((r) => r.position)).toEqual([12n, 13n, 14n]);
    expect(tail.after(12n, 1)?.map((r) => r.position)).toEqual([13n]);
    expect(tail.after(14n, 10)).toEqual([]);
    // and a reader before 11 (which the tail no longer holds) must query the log
    expect(tail.after(10n, 10)).toBeUndefined();
    expect(tail.after(0n, 10)).toBeUndefined();
  });
});
