/**
 * Exactly one answer, whatever the processes do: 2–5 simulated processes race on one message's
 * stream through the pure decider, each claiming, answering, failing, crashing, stalling past its
 * lease or coming back with a claim it lost, on a clock that jumps by generated amounts. Every
 * command is decided on the state folded from the events so far (as the command runner does on a
 * stream), a Conflict being the process's "claim lost". After every step the log must show: at most
 * one answer and one delivery, the answer never changing, and no event from a claim that is not the
 * current one.
 * Beside it, a kill check: a decider that takes any claim id for the current claim (a process that
 * lost its claim still answers and delivers) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type { RecordedEvent } from '../../events';
import {
  claimable,
  decideMessage,
  type MessageCommand,
  type MessageEvent,
} from '../../src/chatMessages/decider';
import { messageAggregate, type MessageState } from '../../src/chatMessages/state';
import { DomainError } from '../../src/shared/errors';
import { T0, at, command } from './messages';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const LEASE_MS = 1_000;
const RETRY_MS = 300;
const STREAM = 'chat-7-m1';

/** What a process does on its turn, read by where it is: answering, delivering, or holding nothing. */
type Move =
  /** Claim when holding nothing; else answer (answer claim) or deliver (answered / deliver claim). */
  | 'progress'
  /** Fail the answer or the delivery, to be retried later. */
  | 'fail'
  /** Fail for good (retryAt null). */
  | 'giveUp'
  /** The process dies: it forgets its claim, which stays until its lease runs out. */
  | 'crash'
  /** Nothing now (the model is slow): time passes, the lease may run out under it. */
  | 'stall'
  /** A process that lost track sends its last claim's next step anyway (a late answer, a late delivery). */
  | 'zombie'
  /** The channel delivers the inbound message again. */
  | 'redeliver';

type Step = { proc: number; advanceMs: number; move: Move };

const move: fc.Arbitrary<Move> = fc.oneof(
  { arbitrary: fc.constant<Move>('progress'), weight: 8 },
  { arbitrary: fc.constant<Move>('fail'), weight: 2 },
  { arbitrary: fc.constant<Move>('giveUp'), weight: 1 },
  { arbitrary: fc.constant<Move>('crash'), weight: 1 },
  { arbitrary: fc.constant<Move>('stall'), weight: 3 },
  { arbitrary: fc.constant<Move>('zombie'), weight: 2 },
  { arbitrary: fc.constant<Move>('redeliver'), weight: 1 },
);

/** Mostly small ticks, sometimes a jump past a lease (or a retry time). */
const advanceMs = fc.oneof(
  { arbitrary: fc.constant(0), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: RETRY_MS }), weight: 4 },
  { arbitrary: fc.integer({ min: LEASE_MS - 50, max: LEASE_MS * 2 }), weight: 2 },
);

const schedule = fc.record({
  processes: fc.integer({ min: 2, max: 5 }),
  steps: fc.array(fc.record({ proc: fc.nat({ max: 4 }), advanceMs, move }), { minLength: 1, maxLength: 60 }),
});

type Proc = {
  /** The claim this process believes it holds, and whether it answered under it. */
  claim: { claimId: string; purpose: 'answer' | 'deliver'; answered: boolean } | null;
  /** The last claim it ever had (a zombie reuses it). */
  lastClaimId: string | null;
  claims: number;
};

/** One message's stream, events wrapped as the log would record them. */
const stream = () => {
  const log: RecordedEvent[] = [];
  let state: MessageState = messageAggregate.initialState();
  return {
    log,
    state: () => state,
    append: (events: readonly MessageEvent[]) => {
      for (const e of events) {
        const recorded = {
          ...e,
          meta: {
            position: BigInt(log.length + 1),
            stream: STREAM,
            streamPosition: BigInt(log.length + 1),
            eventId: `e${log.length + 1}`,
            recordedAt: new Date(T0).toISOString(),
            schemaVersion: 1,
          },
        } as RecordedEvent;
        log.push(recorded);
        state = messageAggregate.evolve(state, recorded);
      }
    },
  };
};

const endsClaim = new Set(['ChatAnswerFailed', 'ChatAnswerDelivered', 'ChatDeliveryFailed']);

/** The claim the log says is current (the last one taken and not ended), read from the events alone. */
const openClaim = (log: readonly RecordedEvent[]) => {
  let open: { claimId: string; leaseUntil: number } | null = null;
  for (const e of log) {
    if (e.type === 'ChatAnswerClaimed')
      open = { claimId: e.data.claimId, leaseUntil: Date.parse(e.data.leaseUntil) };
    else if (endsClaim.has(e.type)) open = null;
  }
  return open;
};

const claimIdOf = (c: MessageCommand) => ('claimId' in c.data ? c.data.claimId : null);

type Seen = {
  takeovers: number;
  claimsLost: number;
  answers: number;
  answersAfterTakeover: number;
  deliveries: number;
  givenUp: number;
};
const nothingSeen = (): Seen => ({
  takeovers: 0,
  claimsLost: 0,
  answers: 0,
  answersAfterTakeover: 0,
  deliveries: 0,
  givenUp: 0,
});
/** Seen across all runs, to show the schedules reach the interesting cases. */
const everSeen = nothingSeen();

/** A decider that takes the command's claim id for the current claim's (the kill check's bug). */
const anyClaimHeld: typeof decideMessage = (c, state) => {
  const claimId = claimIdOf(c);
  return decideMessage(
    c,
    c.type !== 'Claim' && claimId !== null && state.status !== 'none' && state.claim !== null
      ? { ...state, claim: { ...state.claim, claimId } }
      : state,
  );
};

/** Runs one schedule through `decide`, checking the invariants after every command. */
const simulate = (
  { processes, steps }: { processes: number; steps: Step[] },
  decide: typeof decideMessage = decideMessage,
  seen: Seen = everSeen,
) => {
  const s = stream();
  const procs: Proc[] = Array.from({ length: processes }, () => ({
    claim: null,
    lastClaimId: null,
    claims: 0,
  }));
  let now = 0;
  let firstAnswer: { answerId: string; text: string } | null = null;

  /** Decides `c` on the stream's state and appends; false when refused (Conflict: the claim was lost). */
  const run = (c: MessageCommand): MessageEvent[] | null => {
    const before = openClaim(s.log);
    let events: MessageEvent[];
    try {
      events = decide(c, s.state());
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'Conflict') return null;
      throw error;
    }
    for (const e of events) {
      if (e.type === 'ChatAnswerClaimed') {
        // A claim is taken only when no other is live.
        if (before !== null) {
          expect(before.leaseUntil).toBeLessThanOrEqual(now + T0);
          seen.takeovers++;
        }
      } else if (e.type !== 'ChatMessageReceived') {
        // Answers, failures and deliveries come only from the current claim, and from the process holding it.
        expect(before?.claimId).toBe(e.data.claimId);
        expect(claimIdOf(c)).toBe(e.data.claimId);
      }
    }
    s.append(events);
    checkLog();
    return events;
  };

  const checkLog = () => {
    const types = s.log.map((e) => e.type);
    const answers = s.log.filter((e) => e.type === 'ChatAnswered');
    expect(answers.length).toBeLessThanOrEqual(1);
    expect(types.filter((t) => t === 'ChatAnswerDelivered').length).toBeLessThanOrEqual(1);
    expect(types.filter((t) => t === 'ChatMessageReceived')).toHaveLength(1);
    const answer = answers[0];
    if (answer?.type === 'ChatAnswered') {
      firstAnswer ??= { answerId: answer.data.answerId, text: answer.data.text };
      expect(answer.data).toMatchObject(firstAnswer);
      const state = s.state();
      expect(state.status !== 'none' && state.answer).toEqual(firstAnswer);
    }
    // Deliveries (and their failures) come after the answer, and deliver that answer.
    const answeredAt = types.indexOf('ChatAnswered');
    s.log.forEach((e, i) => {
      if (e.type === 'ChatAnswerDelivered' || e.type === 'ChatDeliveryFailed') {
        expect(answeredAt).toBeGreaterThanOrEqual(0);
        expect(i).toBeGreaterThan(answeredAt);
        expect(e.data.answerId).toBe(firstAnswer?.answerId);
      }
    });
    // Delivered and given up are the end: nothing after them.
    const last = s.log.findIndex(
      (e) =>
        e.type === 'ChatAnswerDelivered' ||
        ((e.type === 'ChatAnswerFailed' || e.type === 'ChatDeliveryFailed') && e.data.retryAt === null),
    );
    if (last >= 0) expect(s.log.length).toBe(last + 1);
  };

  const lose = (p: Proc) => {
    p.claim = null;
    seen.claimsLost++;
  };

  const turn = (p: Proc, index: number, m: Move) => {
    if (m === 'redeliver') {
      expect(run(command.receive())).toEqual([]);
      return;
    }
    if (m === 'stall') return;
    if (m === 'crash') {
      p.claim = null;
      return;
    }
    if (m === 'zombie') {
      if (p.lastClaimId === null) return;
      const hasAnswer = s.state().status !== 'none' && (s.state() as { answer: unknown }).answer !== null;
      const c = hasAnswer
        ? command.deliver(p.lastClaimId, now)
        : command.answer(p.lastClaimId, now, `late answer of ${p.lastClaimId}`);
      const events = run(c);
      if (events === null && p.claim?.claimId === p.lastClaimId) lose(p);
      if (events?.[0]?.type === 'ChatAnswered' && p.claim) p.claim.answered = true;
      if (events?.[0]?.type === 'ChatAnswerDelivered') p.claim = null;
      return;
    }
    const claim = p.claim;
    if (claim === null) {
      // Holding nothing, any other move looks for work (as the processor's scan does).
      const claimId = `p${index}.${++p.claims}`;
      const events = run(command.claim(claimId, now, LEASE_MS, `node-${index}`));
      const claimed = events?.[0];
      if (claimed?.type === 'ChatAnswerClaimed') {
        p.claim = { claimId, purpose: claimed.data.purpose, answered: false };
        p.lastClaimId = claimId;
      }
      return;
    }
    const delivering = claim.purpose === 'deliver' || claim.answered;
    const retryAt = m === 'giveUp' ? null : now + RETRY_MS;
    const c =
      m === 'progress'
        ? delivering
          ? command.deliver(claim.claimId, now)
          : command.answer(claim.claimId, now, `answer of ${claim.claimId}`, `answer-${claim.claimId}`)
        : delivering
          ? command.failDelivery(claim.claimId, now, retryAt)
          : command.failAnswer(claim.claimId, now, retryAt);
    const events = run(c);
    if (events === null) return lose(p);
    if (c.type === 'Answer') {
      claim.answered = true;
      seen.answers++;
      if (s.log.filter((e) => e.type === 'ChatAnswerClaimed').length > 1) seen.answersAfterTakeover++;
    } else p.claim = null; // a failure or a delivery ends the claim
    if (c.type === 'Deliver') seen.deliveries++;
    if (retryAt === null) seen.givenUp++;
  };

  run(command.receive());
  for (const step of steps) {
    now += step.advanceMs;
    turn(procs[step.proc % processes]!, step.proc % processes, step.move);
  }

  // Afterwards, once every lease and retry time has passed, a fresh process finishes what is left:
  // the message ends delivered (answered once) or given up, never stuck.
  now += 10 * LEASE_MS;
  for (let i = 0; i < 3; i++) {
    const purpose = claimable(s.state(), at(now).getTime());
    if (purpose === null) break;
    const claimId = `rescuer.${i}`;
    expect(run(command.claim(claimId, now))?.[0]?.type).toBe('ChatAnswerClaimed');
    if (purpose === 'answer')
      expect(run(command.answer(claimId, now, 'rescued', 'answer-rescued'))).not.toBeNull();
    expect(run(command.deliver(claimId, now))?.[0]?.type).toBe('ChatAnswerDelivered');
  }
  const end = s.state();
  expect(['delivered', 'given_up']).toContain(end.status);
  const answers = s.log.filter((e) => e.type === 'ChatAnswered').length;
  if (end.status === 'delivered') expect(answers).toBe(1);
};

describe('exactly one answer per message (the pure decider, simulated processes)', () => {
  it('given 2–5 processes that claim, answer, fail, crash, stall past their lease and come back late, then the log holds at most one answer and one delivery, from current claims only, and the message always ends delivered or given up', () => {
    fc.assert(
      fc.property(schedule, (w) => simulate(w)),
      { seed: propertySeed(), numRuns: propertyRuns(200) },
    );
    // The schedules did reach the cases that matter.
    expect(everSeen.takeovers).toBeGreaterThan(50);
    expect(everSeen.claimsLost).toBeGreaterThan(20);
    expect(everSeen.answersAfterTakeover).toBeGreaterThan(5);
    expect(everSeen.deliveries).toBeGreaterThan(10);
    expect(everSeen.givenUp).toBeGreaterThan(3);
  });

  it('kill check: a late answer or delivery under a claim that is not the current one, taken for it, is caught', () => {
    expectCaught(
      fc.property(schedule, (w) => simulate(w, anyClaimHeld, nothingSeen())),
      { seed: propertySeed(), numRuns: propertyRuns(200) },
    );
  });
});
