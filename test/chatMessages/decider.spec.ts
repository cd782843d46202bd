/**
 * A chat message's life, decided on its own stream: recorded once, claimed by one process at a time
 * under a lease, answered / failed / delivered only by the claim that holds it. And a channel's
 * health, recorded once per failure streak.
 */
import type { ChatChannelFailed, ChatChannelRecovered } from '../../events';
import {
  claimable,
  decideChannelHealth,
  decideMessage,
  type ChannelHealthCommand,
  type MessageCommand,
} from '../../src/chatMessages/decider';
import { channelHealthAggregate, messageAggregate, type MessageState } from '../../src/chatMessages/state';
import { deciderSpec } from '../support/decider';
import {
  LEASE_MS,
  answerFailed,
  answered,
  at,
  claimed,
  command,
  delivered,
  deliveryFailed,
  iso,
  received,
  stateOf,
} from './messages';

const spec = deciderSpec<MessageState, MessageCommand>({ ...messageAggregate, decide: decideMessage });

describe('a chat message', () => {
  describe('is received once', () => {
    it('given nothing, when a message is received, then it is recorded', () =>
      spec.given([]).when(command.receive()).then([received]));

    it('given it was received, when the channel delivers it again, then nothing is recorded', () =>
      spec.given([received]).when(command.receive()).then([]));

    it('given it was answered and delivered, when the channel delivers it again, then nothing is recorded', () =>
      spec
        .given([received, claimed('c1', 0), answered('c1', 10), delivered('c1', 20, 'answer-of-c1')])
        .when(command.receive())
        .then([]));
  });

  describe('is claimed by one process at a time', () => {
    it('given it was received, when a process claims it, then the claim holds for the lease (attempt 1)', () =>
      spec
        .given([received])
        .when(command.claim('c1', 100, 5_000, 'host:1'))
        .then([claimed('c1', 100, { leaseMs: 5_000, node: 'host:1' })]));

    it('given a live claim, when another process claims it, then nothing is recorded', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.claim('c2', LEASE_MS - 1))
        .then([]));

    it('given a claim whose lease ran out, when another process claims it, then it takes the message over (attempt 2)', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.claim('c2', LEASE_MS + 5))
        .then([claimed('c2', LEASE_MS + 5, { attempt: 2 })]));

    it('given a lease, at the very millisecond it ends, then the message can be taken over', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.claim('c2', LEASE_MS))
        .then([claimed('c2', LEASE_MS, { attempt: 2 })]));

    it('given two takeovers, when a third process claims it, then the attempt counts all three', () =>
      spec
        .given([received, claimed('c1', 0), claimed('c2', LEASE_MS, { attempt: 2 })])
        .when(command.claim('c3', 2 * LEASE_MS))
        .then([claimed('c3', 2 * LEASE_MS, { attempt: 3 })]));

    it('given nothing was received, when a process claims, then nothing is recorded', () =>
      spec.given([]).when(command.claim('c1', 0)).then([]));
  });

  describe('is answered only by the claim that holds it', () => {
    it('given a claim, when its holder answers, then the answer is recorded', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.answer('c1', 500, 'in Lyon', 'a-1'))
        .then([answered('c1', 500, 'in Lyon', 'a-1')]));

    it('given a claim whose lease ran out but that nobody took over, when its holder answers, then the answer is kept', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.answer('c1', LEASE_MS * 3))
        .then([answered('c1', LEASE_MS * 3)]));

    it('given the message was taken over, when the first holder answers, then it is refused (Conflict), its claim lost', () =>
      spec
        .given([received, claimed('c1', 0), claimed('c2', LEASE_MS + 1, { attempt: 2 })])
        .when(command.answer('c1', LEASE_MS + 2))
        .thenThrows('Conflict', /claim c1 .* was lost/));

    it('given a claim, when a process that never claimed it answers, then it is refused (Conflict)', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.answer('stranger', 10))
        .thenThrows('Conflict', /claim stranger .* was lost/));

    it('given no claim at all, when a process answers, then it is refused (Conflict)', () =>
      spec.given([received]).when(command.answer('c1', 10)).thenThrows('Conflict'));

    it('given an answer, when its holder answers again, then it is refused (Conflict): one answer only', () =>
      spec
        .given([received, claimed('c1', 0), answered('c1', 10)])
        .when(command.answer('c1', 20, 'something else'))
        .thenThrows('Conflict', /answered already/));

    it('given an answer, when another process answers, then it is refused (Conflict)', () =>
      spec
        .given([received, claimed('c1', 0), answered('c1', 10)])
        .when(command.answer('c2', 20, 'something else'))
        .thenThrows('Conflict', /claim c2 .* was lost/));
  });

  describe('fails only under the claim that holds it', () => {
    it('given a claim, when its holder fails with a retry time, then the failure is recorded with it', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.failAnswer('c1', 100, 2_100, 'model timed out'))
        .then([answerFailed('c1', 100, 2_100, { error: 'model timed out' })]));

    it('given a second attempt, when its holder fails, then the failure carries attempt 2', () =>
      spec
        .given([received, claimed('c1', 0), answerFailed('c1', 100, 200), claimed('c2', 300, { attempt: 2 })])
        .when(command.failAnswer('c2', 400, 1_400))
        .then([answerFailed('c2', 400, 1_400, { attempt: 2 })]));

    it('given the message was taken over, when the first holder fails, then it is refused (Conflict)', () =>
      spec
        .given([received, claimed('c1', 0), claimed('c2', LEASE_MS, { attempt: 2 })])
        .when(command.failAnswer('c1', LEASE_MS + 1, null))
        .thenThrows('Conflict', /claim c1/));

    it('given its failure was recorded, when the same holder fails again, then it is refused (Conflict): the claim ended', () =>
      spec
        .given([received, claimed('c1', 0), answerFailed('c1', 100, 2_100)])
        .when(command.failAnswer('c1', 150, 2_150))
        .thenThrows('Conflict', /claim c1/));

    it('given a failure with no retry time, then the message is given up and nobody can claim it any more', () => {
      const given = spec.given([received, claimed('c1', 0), answerFailed('c1', 100, null)]);
      expect(stateOf([received, claimed('c1', 0), answerFailed('c1', 100, null)])).toMatchObject({
        status: 'given_up',
        lastError: 'model timed out',
        claim: null,
      });
      given.when(command.claim('c2', 10 * LEASE_MS)).then([]);
      given.when(command.answer('c1', 200)).thenThrows('Conflict');
    });
  });

  describe('retries when its retry time comes', () => {
    const failedOnce = [received, claimed('c1', 0), answerFailed('c1', 100, 2_100)];

    it('given a failure, when a process claims before the retry time, then nothing is recorded', () =>
      spec.given(failedOnce).when(command.claim('c2', 2_099)).then([]));

    it('given a failure, when a process claims at the retry time, then it takes attempt 2', () =>
      spec
        .given(failedOnce)
        .when(command.claim('c2', 2_100))
        .then([claimed('c2', 2_100, { attempt: 2 })]));
  });

  describe('is delivered by the claim that holds it, once answered', () => {
    const answeredByC1 = [received, claimed('c1', 0), answered('c1', 10, 'in Lyon', 'a-1')];

    it('given an answer, when the answering process delivers it, then the delivery is recorded with the answer id', () =>
      spec
        .given(answeredByC1)
        .when(command.deliver('c1', 20, 'ts-9'))
        .then([delivered('c1', 20, 'a-1', 'ts-9')]));

    it('given an answer, when another process delivers it, then it is refused (Conflict)', () =>
      spec
        .given(answeredByC1)
        .when(command.deliver('c2', 20))
        .thenThrows('Conflict', /claim c2/));

    it('given a claim without an answer, when its holder delivers, then it is refused (Conflict): nothing to deliver', () =>
      spec
        .given([received, claimed('c1', 0)])
        .when(command.deliver('c1', 20))
        .thenThrows('Conflict', /no answer to deliver/));

    it('given it was delivered, when the same holder delivers again, then it is refused (Conflict)', () =>
      spec
        .given([...answeredByC1, delivered('c1', 20, 'a-1')])
        .when(command.deliver('c1', 30))
        .thenThrows('Conflict', /claim c1/));

    it('given an answer, when the answering process fails to deliver, then the failure is recorded with its retry time', () =>
      spec
        .given(answeredByC1)
        .when(command.failDelivery('c1', 20, 1_020, 'channel down'))
        .then([deliveryFailed('c1', 20, 'a-1', 1_020)]));

    it('given an answer, when another process fails to deliver it, then it is refused (Conflict)', () =>
      spec
        .given(answeredByC1)
        .when(command.failDelivery('c2', 20, 1_020))
        .thenThrows('Conflict', /claim c2/));

    it('given the answerer stalled past its lease, when another process claims, then it claims to deliver (not to answer again)', () =>
      spec
        .given(answeredByC1)
        .when(command.claim('c2', LEASE_MS + 1))
        .then([claimed('c2', LEASE_MS + 1, { purpose: 'deliver', attempt: 1 })]));

    it('given the answerer still holds its lease, when another process claims, then nothing is recorded', () =>
      spec
        .given(answeredByC1)
        .when(command.claim('c2', LEASE_MS - 1))
        .then([]));

    it('given the answerer failed its own delivery (attempt 1), when a process claims after it, then it claims delivery attempt 2', () =>
      spec
        .given([...answeredByC1, deliveryFailed('c1', 20, 'a-1', 1_020)])
        .when(command.claim('c2', 1_020))
        .then([claimed('c2', 1_020, { purpose: 'deliver', attempt: 2 })]));

    it('given an answer, when its claim reports the answer failed, then it is refused (only delivery can fail now)', () =>
      spec
        .given(answeredByC1)
        .when(command.failAnswer('c1', 20, null))
        .thenThrows('Conflict', /answered already/));

    it('given a delivery claim, when its holder delivers, then the delivery carries the answer id of the first answer', () =>
      spec
        .given([
          ...answeredByC1,
          deliveryFailed('c1', 20, 'a-1', 1_020),
          claimed('c2', 1_020, { purpose: 'deliver' }),
        ])
        .when(command.deliver('c2', 1_100))
        .then([delivered('c2', 1_100, 'a-1')]));

    it('given a delivery claim, when its holder answers, then it is refused (Conflict): the answer stays the first one', () =>
      spec
        .given([
          ...answeredByC1,
          deliveryFailed('c1', 20, 'a-1', 1_020),
          claimed('c2', 1_020, { purpose: 'deliver' }),
        ])
        .when(command.answer('c2', 1_100, 'a different answer'))
        .thenThrows('Conflict', /answered already/));

    it('given a second delivery claim, when its holder fails, then the failure carries delivery attempt 2', () =>
      spec
        .given([
          ...answeredByC1,
          claimed('c2', LEASE_MS, { purpose: 'deliver', attempt: 1 }),
          deliveryFailed('c2', LEASE_MS + 1, 'a-1', LEASE_MS + 100),
          claimed('c3', LEASE_MS + 100, { purpose: 'deliver', attempt: 2 }),
        ])
        .when(command.failDelivery('c3', LEASE_MS + 200, null))
        .then([deliveryFailed('c3', LEASE_MS + 200, 'a-1', null, { attempt: 2 })]));

    it('given a delivery failure with no retry time, then the message is given up, its answer kept', () => {
      const events = [...answeredByC1, deliveryFailed('c1', 20, 'a-1', null)];
      expect(stateOf(events)).toMatchObject({
        status: 'given_up',
        answer: { answerId: 'a-1', text: 'in Lyon' },
      });
      spec
        .given(events)
        .when(command.claim('c2', 10 * LEASE_MS))
        .then([]);
    });
  });
});

describe('claimable: what a claim would be for now', () => {
  const answeredByC1 = [received, claimed('c1', 0), answered('c1', 10, 'in Lyon', 'a-1')];
  const row = (
    what: string,
    events: Parameters<typeof stateOf>[0],
    ms: number,
    expected: 'answer' | 'deliver' | null,
  ) => ({ what, events, ms, expected });
  const cases = [
    row('nothing received', [], 0, null),
    row('received, never claimed', [received], 0, 'answer'),
    row('claimed, lease live', [received, claimed('c1', 0)], LEASE_MS - 1, null),
    row('claimed, lease ended', [received, claimed('c1', 0)], LEASE_MS, 'answer'),
    row(
      'failed, before its retry time',
      [received, claimed('c1', 0), answerFailed('c1', 5, 1_000)],
      999,
      null,
    ),
    row(
      'failed, at its retry time',
      [received, claimed('c1', 0), answerFailed('c1', 5, 1_000)],
      1_000,
      'answer',
    ),
    row('it was given up', [received, claimed('c1', 0), answerFailed('c1', 5, null)], 10 * LEASE_MS, null),
    row('answered, the answerer’s lease live', answeredByC1, LEASE_MS - 1, null),
    row('answered, the answerer’s lease ended', answeredByC1, LEASE_MS, 'deliver'),
    row(
      'delivery failed, before its retry time',
      [...answeredByC1, deliveryFailed('c1', 20, 'a-1', 1_000)],
      999,
      null,
    ),
    row(
      'delivery failed, at its retry time',
      [...answeredByC1, deliveryFailed('c1', 20, 'a-1', 1_000)],
      1_000,
      'deliver',
    ),
    row(
      'a delivery claim whose lease ended',
      [...answeredByC1, deliveryFailed('c1', 20, 'a-1', 1_000), claimed('c2', 1_000, { purpose: 'deliver' })],
      1_000 + LEASE_MS,
      'deliver',
    ),
    row('delivered', [...answeredByC1, delivered('c1', 20, 'a-1')], 10 * LEASE_MS, null),
  ];

  it.each(cases)('given $what, then it is $expected', ({ events, ms, expected }) =>
    expect(claimable(stateOf(events), at(ms).getTime())).toBe(expected),
  );
});

describe('a chat channel’s health', () => {
  const health = deciderSpec<{ failing: string | null }, ChannelHealthCommand>({
    ...channelHealthAggregate,
    decide: decideChannelHealth,
  });
  const channel = { chatbotId: 7, channel: 'telegram' as const };
  const failure = (error: string, ms = 0): ChannelHealthCommand => ({
    type: 'ReportChannelFailure',
    data: { ...channel, error },
    metadata: { now: at(ms) },
  });
  const recovery = (ms = 0): ChannelHealthCommand => ({
    type: 'ReportChannelRecovery',
    data: channel,
    metadata: { now: at(ms) },
  });
  const failed = (error: string, ms = 0): ChatChannelFailed => ({
    type: 'ChatChannelFailed',
    data: { ...channel, error, failedAt: iso(ms) },
  });
  const recovered = (ms = 0): ChatChannelRecovered => ({
    type: 'ChatChannelRecovered',
    data: { ...channel, recoveredAt: iso(ms) },
  });

  it('given a working channel, when it fails, then the failure is recorded', () =>
    health
      .given([])
      .when(failure('401 Unauthorized', 5))
      .then([failed('401 Unauthorized', 5)]));

  it('given a failure streak, when the same error is reported again, then nothing is recorded', () =>
    health
      .given([failed('401 Unauthorized')])
      .when(failure('401 Unauthorized', 60_000))
      .then([]));

  it('given a failure streak, when a different error is reported, then the new error is recorded', () =>
    health
      .given([failed('401 Unauthorized')])
      .when(failure('ECONNREFUSED', 10))
      .then([failed('ECONNREFUSED', 10)]));

  it('given a failure streak, when the channel works again, then its recovery is recorded', () =>
    health
      .given([failed('401 Unauthorized')])
      .when(recovery(20))
      .then([recovered(20)]));

  it('given a working channel, when it reports working, then nothing is recorded', () =>
    health.given([]).when(recovery(20)).then([]));

  it('given it recovered, when it reports working again, then nothing is recorded', () =>
    health
      .given([failed('401 Unauthorized'), recovered()])
      .when(recovery(30))
      .then([]));

  it('given it recovered, when the old error comes back, then it is recorded as a new streak', () =>
    health
      .given([failed('401 Unauthorized'), recovered()])
      .when(failure('401 Unauthorized', 40))
      .then([failed('401 Unauthorized', 40)]));
});
