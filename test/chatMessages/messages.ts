/**
 * One chat message's life as plain data, for the decider specs: its events and the commands the
 * processor sends, on a clock counted in milliseconds from T0.
 */
import type {
  ChatAnswerClaimed,
  ChatAnswerDelivered,
  ChatAnswered,
  ChatAnswerFailed,
  ChatDeliveryFailed,
  ChatMessageReceived,
} from '../../events';
import type { MessageCommand } from '../../src/chatMessages/decider';
import { messageAggregate, type MessageState } from '../../src/chatMessages/state';
import { recorded } from '../support/decider';

export const T0 = Date.parse('2026-03-04T05:06:07.089Z');
/** The clock `ms` milliseconds after T0. */
export const at = (ms: number) => new Date(T0 + ms);
export const iso = (ms: number) => at(ms).toISOString();

export const LEASE_MS = 30_000;
export const MESSAGE_ID = 'm1';
export const CHATBOT_ID = 7;
const ids = { messageId: MESSAGE_ID, chatbotId: CHATBOT_ID };

export const inbound: ChatMessageReceived['data'] = {
  ...ids,
  projectId: 1,
  project: 'proj',
  chatbot: 'bot',
  channel: 'builtin',
  chatId: 'c1',
  user: 'ann',
  text: 'where is my parcel?',
  externalId: null,
  channelMessageId: null,
  threadId: null,
  receivedAt: iso(0),
};

export const received: ChatMessageReceived = { type: 'ChatMessageReceived', data: inbound };

export const claimed = (
  claimId: string,
  ms: number,
  options: { purpose?: 'answer' | 'deliver'; attempt?: number; leaseMs?: number; node?: string } = {},
): ChatAnswerClaimed => ({
  type: 'ChatAnswerClaimed',
  data: {
    ...ids,
    claimId,
    node: options.node ?? `node-of-${claimId}`,
    purpose: options.purpose ?? 'answer',
    attempt: options.attempt ?? 1,
    leaseUntil: iso(ms + (options.leaseMs ?? LEASE_MS)),
    claimedAt: iso(ms),
  },
});

export const answered = (
  claimId: string,
  ms: number,
  text = 'in Lyon',
  answerId = `answer-of-${claimId}`,
): ChatAnswered => ({
  type: 'ChatAnswered',
  data: { ...ids, claimId, answerId, text, traceId: null, answeredAt: iso(ms) },
});

export const answerFailed = (
  claimId: string,
  ms: number,
  retryAtMs: number | null,
  options: { attempt?: number; error?: string } = {},
): ChatAnswerFailed => ({
  type: 'ChatAnswerFailed',
  data: {
    ...ids,
    claimId,
    attempt: options.attempt ?? 1,
    error: options.error ?? 'model timed out',
    retryAt: retryAtMs === null ? null : iso(retryAtMs),
    failedAt: iso(ms),
  },
});

export const delivered = (
  claimId: string,
  ms: number,
  answerId: string,
  externalId: string | null = null,
): ChatAnswerDelivered => ({
  type: 'ChatAnswerDelivered',
  data: { ...ids, claimId, answerId, channel: 'builtin', externalId, deliveredAt: iso(ms) },
});

export const deliveryFailed = (
  claimId: string,
  ms: number,
  answerId: string,
  retryAtMs: number | null,
  options: { attempt?: number; error?: string } = {},
): ChatDeliveryFailed => ({
  type: 'ChatDeliveryFailed',
  data: {
    ...ids,
    claimId,
    answerId,
    attempt: options.attempt ?? 1,
    error: options.error ?? 'channel down',
    retryAt: retryAtMs === null ? null : iso(retryAtMs),
    failedAt: iso(ms),
  },
});

/** The commands, as the processor sends them (its clock stamped in metadata). */
export const command = {
  receive: (): MessageCommand => ({ type: 'Receive', data: inbound }),
  claim: (claimId: string, ms: number, leaseMs = LEASE_MS, node = `node-of-${claimId}`): MessageCommand => ({
    type: 'Claim',
    data: { claimId, node, leaseMs },
    metadata: { now: at(ms) },
  }),
  answer: (
    claimId: string,
    ms: number,
    text = 'in Lyon',
    answerId = `answer-of-${claimId}`,
  ): MessageCommand => ({
    type: 'Answer',
    data: { claimId, answerId, text, traceId: null },
    metadata: { now: at(ms) },
  }),
  failAnswer: (
    claimId: string,
    ms: number,
    retryAtMs: number | null,
    error = 'model timed out',
  ): MessageCommand => ({
    type: 'FailAnswer',
    data: { claimId, error, retryAt: retryAtMs === null ? null : at(retryAtMs) },
    metadata: { now: at(ms) },
  }),
  deliver: (claimId: string, ms: number, externalId: string | null = null): MessageCommand => ({
    type: 'Deliver',
    data: { claimId, externalId },
    metadata: { now: at(ms) },
  }),
  failDelivery: (
    claimId: string,
    ms: number,
    retryAtMs: number | null,
    error = 'channel down',
  ): MessageCommand => ({
    type: 'FailDelivery',
    data: { claimId, error, retryAt: retryAtMs === null ? null : at(retryAtMs) },
    metadata: { now: at(ms) },
  }),
};

/** The state a stream holding `events` folds to, as the command runner would load it. */
export const stateOf = (events: Parameters<typeof recorded>[0]): MessageState =>
  recorded(events).reduce(messageAggregate.evolve, messageAggregate.initialState());
