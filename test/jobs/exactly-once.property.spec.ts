/**
 * Exactly once per tick, whatever the schedule and however the processes see it: 2–4 simulated
 * processes fire one job on a clock that jumps by generated amounts. Each looks for its due tick
 * on its own view of the job's runs (a read model that may lag the log by any number of events),
 * then claims it through the pure decider on the log's state (as the command runner does: a claim
 * decided on a stale state fails its version check and is decided again on what the log holds).
 * A process may die mid-run (its claim lapses) or finish. After every step the log must show: each
 * tick claimed at most once, claims in increasing order of tick, every claimed tick one of the
 * schedule's, not after the time it was claimed at nor after END; a job without EVERY claimed at
 * most once; and at the end, a process with a fresh view finds nothing due that was not claimed.
 * Beside it, a kill check: a claim decided without the last claimed tick (a tick claimed again by a
 * process whose view lags) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type { JobRunEvent, RecordedEvent } from '../../events';
import { decideJobRun, type JobRunCommand } from '../../src/jobs/decider';
import { dueTick, parseEvery, tickAt, type JobSchedule } from '../../src/jobs/schedule';
import { jobRunsAggregate, type JobRunsState } from '../../src/jobs/state';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const JOB = 1n;
const LEASE_MS = 90_000;
const START = Date.parse('2030-01-31T10:00:00.000Z');
const MINUTE = 60_000;

const schedule: fc.Arbitrary<JobSchedule> = fc
  .record({
    startOffset: fc.integer({ min: 0, max: 5 * MINUTE }),
    every: fc.option(
      fc.record({
        n: fc.integer({ min: 1, max: 3 }),
        unit: fc.constantFrom('minute', 'hour', 'day', 'month'),
      }),
      { nil: null, freq: 4 },
    ),
    endAfter: fc.option(fc.integer({ min: 0, max: 90 * 86_400_000 }), { nil: null }),
  })
  .map(({ startOffset, every, endAfter }) => ({
    startAt: START + startOffset,
    every: every === null ? null : parseEvery(every.n, every.unit),
    endAt: endAfter === null ? null : START + startOffset + endAfter,
  }));

/** Mostly small steps, sometimes a long downtime (days, months). */
const advanceMs = fc.oneof(
  { arbitrary: fc.constant(0), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 3 * MINUTE }), weight: 5 },
  { arbitrary: fc.integer({ min: 1, max: 3 * 3_600_000 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 60 * 86_400_000 }), weight: 1 },
);

type Step = { proc: number; advanceMs: number; lag: number; finish: boolean };
const world = fc.record({
  schedule,
  processes: fc.integer({ min: 2, max: 4 }),
  steps: fc.array(
    fc.record({
      proc: fc.nat({ max: 3 }),
      advanceMs,
      /** How many events of the log this process's read model has not applied yet. */
      lag: fc.oneof(fc.constant(0), fc.nat({ max: 6 })),
      /** Whether the winner finishes its run (else it dies with the run open). */
      finish: fc.boolean(),
    }),
    { minLength: 1, maxLength: 50 },
  ),
});

/** The job's runs stream, events recorded as the log would. */
const runsStream = () => {
  const log: RecordedEvent[] = [];
  const fold = (events: readonly RecordedEvent[]) =>
    events.reduce(jobRunsAggregate.evolve, jobRunsAggregate.initialState());
  return {
    log,
    state: (): JobRunsState => fold(log),
    /** What a read model `lag` events behind knows. */
    view: (lag: number): JobRunsState => fold(log.slice(0, Math.max(0, log.length - lag))),
    append: (events: readonly JobRunEvent[]) => {
      for (const e of events)
        log.push({
          ...e,
          meta: {
            position: BigInt(log.length + 1),
            stream: 'job-runs-1',
            streamPosition: BigInt(log.length + 1),
            eventId: `e${log.length + 1}`,
            recordedAt: new Date(START).toISOString(),
            schemaVersion: 1,
          },
        } as RecordedEvent);
    },
  };
};

const isTickOf = (s: JobSchedule, t: number) => {
  if (s.every === null) return t === s.startAt;
  const interval = tickAt(s, 1) - tickAt(s, 0);
  if (s.every.unit !== 'month') return t >= s.startAt && (t - s.startAt) % interval === 0;
  for (let k = 0; k < 10_000; k++) {
    const at = tickAt(s, k);
    if (at === t) return true;
    if (at > t) return false;
  }
  return false;
};

type Seen = { claims: number; collapsed: number; staleRefusals: number; abandoned: number };
const seen: Seen = { claims: 0, collapsed: 0, staleRefusals: 0, abandoned: 0 };

/** A decider that decides a claim as if no tick had been claimed yet (the kill check's bug). */
const claimingWithoutLastTick: typeof decideJobRun = (command, state, jobId) =>
  decideJobRun(command, command.type === 'ClaimRun' ? { ...state, lastTick: null } : state, jobId);

const simulate = (
  {
    schedule: s,
    processes,
    steps,
  }: {
    schedule: JobSchedule;
    processes: number;
    steps: Step[];
  },
  decideRun: typeof decideJobRun = decideJobRun,
  counted: Seen = seen,
) => {
  const stream = runsStream();
  let now = START;
  let claimNo = 0;
  const claimedAt = new Map<number, number>();
  const decide = (command: JobRunCommand) => {
    const events = decideRun(command, stream.state(), JOB);
    stream.append(events);
    return events;
  };
  for (const step of steps) {
    now += step.advanceMs;
    const proc = step.proc % processes;
    const view = stream.view(step.lag);
    const due = dueTick(s, view.lastTick, now);
    if (due === null) continue;
    const claimId = `p${proc}-c${++claimNo}`;
    const events = decide({
      type: 'ClaimRun',
      data: { jobId: JOB, projectId: 1n, tick: new Date(due), claimId, node: `p${proc}`, leaseMs: LEASE_MS },
      metadata: { now: new Date(now) },
    });
    const started = events.find((e) => e.type === 'JobRunStarted');
    if (!started) {
      counted.staleRefusals++;
      continue;
    }
    if (events.some((e) => e.type === 'JobRunAbandoned')) counted.abandoned++;
    counted.claims++;
    // The tick is one of the schedule's, due by now, within END, and never claimed before.
    expect(isTickOf(s, due)).toBe(true);
    expect(due).toBeLessThanOrEqual(now);
    if (s.endAt !== null) expect(due).toBeLessThanOrEqual(s.endAt);
    expect(claimedAt.has(due)).toBe(false);
    if (
      view.lastTick !== null &&
      s.every !== null &&
      due - view.lastTick > (tickAt(s, 1) - tickAt(s, 0)) * 1.5
    )
      counted.collapsed++;
    claimedAt.set(due, now);
    if (step.finish) decide({ type: 'FinishRun', data: { claimId }, metadata: { now: new Date(now) } });
  }
  // Claims are in increasing order of tick (so none twice), and a job without EVERY runs once.
  const ticks = stream.log
    .filter((e) => e.type === 'JobRunStarted')
    .map((e) => Date.parse((e.data as { tick: string }).tick));
  expect(ticks).toEqual([...ticks].sort((x, y) => x - y));
  expect(new Set(ticks).size).toBe(ticks.length);
  if (s.every === null) expect(ticks.length).toBeLessThanOrEqual(1);
  // Liveness: once every lease has run out, a process with a fresh view claims what is due, and then nothing is.
  now += LEASE_MS + 1;
  const due = dueTick(s, stream.state().lastTick, now);
  if (due !== null) {
    const events = decide({
      type: 'ClaimRun',
      data: {
        jobId: JOB,
        projectId: 1n,
        tick: new Date(due),
        claimId: 'final',
        node: 'p0',
        leaseMs: LEASE_MS,
      },
      metadata: { now: new Date(now) },
    });
    expect(events.some((e) => e.type === 'JobRunStarted')).toBe(true);
  }
  expect(dueTick(s, stream.state().lastTick, now)).toBeNull();
};

describe('jobs: exactly once per tick (property)', () => {
  it('holds for generated schedules, clock jumps, lagging views and dying processes', () => {
    fc.assert(
      fc.property(world, (w) => simulate(w)),
      { seed: propertySeed(), numRuns: propertyRuns(400) },
    );
    // The generated worlds reach the interesting cases.
    expect(seen.claims).toBeGreaterThan(100);
    expect(seen.staleRefusals).toBeGreaterThan(10);
    expect(seen.collapsed).toBeGreaterThan(10);
    expect(seen.abandoned).toBeGreaterThan(5);
  });

  it('kill check: a tick claimed again, the claim decided without the last claimed tick, is caught', () => {
    const counted: Seen = { claims: 0, collapsed: 0, staleRefusals: 0, abandoned: 0 };
    expectCaught(
      fc.property(world, (w) => simulate(w, claimingWithoutLastTick, counted)),
      { seed: propertySeed(), numRuns: propertyRuns(400) },
    );
  });
});
