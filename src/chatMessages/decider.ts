import type {
  Channel,
  ChatChannelFailed,
  ChatChannelRecovered,
  ChatAnswerClaimed,
  ChatAnswerDelivered,
  ChatAnswered,
  ChatAnswerFailed,
  ChatDeliveryFailed,
  ChatMessageReceived,
} from '../../events';
import { conflict } from '../shared/errors';
import { decideByType, type Now } from '../shared/decision';
import type { ChannelHealthState, MessageState } from './state';

/**
 * A message's life, decided on its own stream: received once; claimed by one process at a time
 * (a claim whose lease has run out may be taken over); answered, failed or delivered only by the
 * claim that holds it. A process that lost its claim (it was too slow, or another took over) is
 * refused, so exactly one answer is recorded whatever happens to the processes.
 */
export type MessageCommand =
  | { type: 'Receive'; data: ChatMessageReceived['data'] }
  | { type: 'Claim'; data: { claimId: string; node: string; leaseMs: number }; metadata: Now }
  | {
      type: 'Answer';
      data: { claimId: string; answerId: string; text: string; traceId: string | null };
      metadata: Now;
    }
  | { type: 'FailAnswer'; data: { claimId: string; error: string; retryAt: Date | null }; metadata: Now }
  | { type: 'Deliver'; data: { claimId: string; externalId: string | null }; metadata: Now }
  | { type: 'FailDelivery'; data: { claimId: string; error: string; retryAt: Date | null }; metadata: Now };

export type MessageEvent =
  | ChatMessageReceived
  | ChatAnswerClaimed
  | ChatAnswered
  | ChatAnswerFailed
  | ChatAnswerDelivered
  | ChatDeliveryFailed;

/** What a claim would be for now: answering, delivering, or nothing (done, held, or not yet due). */
export const claimable = (state: MessageState, now: number): 'answer' | 'deliver' | null => {
  if (state.status === 'none' || state.status === 'delivered' || state.status === 'given_up') return null;
  if (state.claim !== null && state.claim.leaseUntil > now) return null;
  if (state.retryAt !== null && state.retryAt > now) return null;
  return state.answer === null ? 'answer' : 'deliver';
};

const held = (state: MessageState, claimId: string) => {
  // An answered message stays claimed by whoever answered it, until it is delivered.
  if ((state.status !== 'claimed' && state.status !== 'answered') || state.claim?.claimId !== claimId)
    throw conflict(
      `The claim ${claimId} on this message was lost (another process took it over, or it finished)`,
      'Claim lost',
    );
  return state;
};

type Command<T extends MessageCommand['type']> = Extract<MessageCommand, { type: T }>;

const receive = (command: Command<'Receive'>, state: MessageState): ChatMessageReceived[] =>
  // The channel delivered it again: it is recorded once.
  state.status === 'none' ? [{ type: 'ChatMessageReceived', data: command.data }] : [];

const claim = (command: Command<'Claim'>, state: MessageState): ChatAnswerClaimed[] => {
  const now = command.metadata.now.getTime();
  const purpose = claimable(state, now);
  if (purpose === null || state.status === 'none') return [];
  return [
    {
      type: 'ChatAnswerClaimed',
      data: {
        messageId: state.message.messageId,
        chatbotId: state.message.chatbotId,
        claimId: command.data.claimId,
        node: command.data.node,
        purpose,
        attempt: (purpose === 'answer' ? state.attempts : state.deliveries) + 1,
        leaseUntil: new Date(now + command.data.leaseMs).toISOString(),
        claimedAt: command.metadata.now.toISOString(),
      },
    },
  ];
};

const answer = (command: Command<'Answer'>, state: MessageState): ChatAnswered[] => {
  const s = held(state, command.data.claimId);
  if (s.answer !== null) throw conflict('This message is answered already', 'Answered');
  return [
    {
      type: 'ChatAnswered',
      data: {
        messageId: s.message.messageId,
        chatbotId: s.message.chatbotId,
        claimId: command.data.claimId,
        answerId: command.data.answerId,
        text: command.data.text,
        traceId: command.data.traceId,
        answeredAt: command.metadata.now.toISOString(),
      },
    },
  ];
};

const failAnswer = (command: Command<'FailAnswer'>, state: MessageState): ChatAnswerFailed[] => {
  const s = held(state, command.data.claimId);
  // Only the claim answering may fail the answer; once answered, only delivery can fail.
  if (s.answer !== null || s.claim?.purpose !== 'answer')
    throw conflict('This message is answered already', 'Answered');
  return [
    {
      type: 'ChatAnswerFailed',
      data: {
        messageId: s.message.messageId,
        chatbotId: s.message.chatbotId,
        claimId: command.data.claimId,
        attempt: Math.max(1, s.attempts),
        error: command.data.error,
        retryAt: command.data.retryAt?.toISOString() ?? null,
        failedAt: command.metadata.now.toISOString(),
      },
    },
  ];
};

/** A delivery's outcome is recorded by the claim that holds an answered message; the fields both share. */
const deliveryOf = (state: MessageState, claimId: string) => {
  const s = held(state, claimId);
  if (s.answer === null) throw conflict('This message has no answer to deliver', 'Not answered');
  return {
    s,
    base: {
      messageId: s.message.messageId,
      chatbotId: s.message.chatbotId,
      claimId,
      answerId: s.answer.answerId,
    },
  };
};

const deliver = (command: Command<'Deliver'>, state: MessageState): ChatAnswerDelivered[] => {
  const { s, base } = deliveryOf(state, command.data.claimId);
  return [
    {
      type: 'ChatAnswerDelivered',
      data: {
        ...base,
        channel: s.message.channel,
        externalId: command.data.externalId,
        deliveredAt: command.metadata.now.toISOString(),
      },
    },
  ];
};

const failDelivery = (command: Command<'FailDelivery'>, state: MessageState): ChatDeliveryFailed[] => {
  const { s, base } = deliveryOf(state, command.data.claimId);
  return [
    {
      type: 'ChatDeliveryFailed',
      data: {
        ...base,
        // The answering claim's own delivery is the first; a delivery claim counted itself.
        attempt: s.claim?.purpose === 'deliver' ? Math.max(1, s.deliveries) : s.deliveries + 1,
        error: command.data.error,
        retryAt: command.data.retryAt?.toISOString() ?? null,
        failedAt: command.metadata.now.toISOString(),
      },
    },
  ];
};

export const decideMessage = decideByType<MessageCommand, MessageState, MessageEvent>({
  Receive: receive,
  Claim: claim,
  Answer: answer,
  FailAnswer: failAnswer,
  Deliver: deliver,
  FailDelivery: failDelivery,
});

export type ChannelHealthCommand =
  | {
      type: 'ReportChannelFailure';
      data: { chatbotId: number; channel: Channel; error: string };
      metadata: Now;
    }
  | { type: 'ReportChannelRecovery'; data: { chatbotId: number; channel: Channel }; metadata: Now };

type HealthCommand<T extends ChannelHealthCommand['type']> = Extract<ChannelHealthCommand, { type: T }>;

const reportChannelFailure = (
  command: HealthCommand<'ReportChannelFailure'>,
  state: ChannelHealthState,
): ChatChannelFailed[] =>
  state.failing === command.data.error
    ? []
    : [
        {
          type: 'ChatChannelFailed',
          data: { ...command.data, failedAt: command.metadata.now.toISOString() },
        },
      ];

const reportChannelRecovery = (
  command: HealthCommand<'ReportChannelRecovery'>,
  state: ChannelHealthState,
): ChatChannelRecovered[] =>
  state.failing === null
    ? []
    : [
        {
          type: 'ChatChannelRecovered',
          data: { ...command.data, recoveredAt: command.metadata.now.toISOString() },
        },
      ];

/**
 * A channel's failures are recorded once per streak (the same error again changes nothing, whichever
 * process sees it), and its recovery once, so a failing poll does not fill the log.
 */
export const decideChannelHealth = decideByType<
  ChannelHealthCommand,
  ChannelHealthState,
  ChatChannelFailed | ChatChannelRecovered
>({ ReportChannelFailure: reportChannelFailure, ReportChannelRecovery: reportChannelRecovery });
