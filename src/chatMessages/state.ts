import crypto from 'node:crypto';
import type { Channel, ChatMessageReceived, RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';

/**
 * An inbound message's stream. With the channel's own message id, the name is derived from it, so a
 * message its channel delivers twice (Slack retries an event it thinks we missed) is one stream and
 * is recorded once; without one, a fresh id.
 */
export const messageKey = (
  chatbotId: bigint | number,
  channel: Channel,
  chatId: string,
  externalId: string | null,
) =>
  externalId === null
    ? crypto.randomUUID().replace(/-/g, '')
    : crypto
        .createHash('sha256')
        .update(`${chatbotId}\u0000${channel}\u0000${chatId}\u0000${externalId}`)
        .digest('hex')
        .slice(0, 32);

export const messageStream = (chatbotId: bigint | number, key: string) => `chat-${chatbotId}-${key}`;

/** Where a message is in its life. */
type MessageStatus = 'received' | 'claimed' | 'failed' | 'answered' | 'delivered' | 'given_up';

type Claim = {
  readonly claimId: string;
  readonly node: string;
  readonly purpose: 'answer' | 'deliver';
  readonly leaseUntil: number;
};

export type MessageState =
  | { readonly status: 'none' }
  | {
      readonly status: MessageStatus;
      readonly message: ChatMessageReceived['data'];
      readonly claim: Claim | null;
      /** Answer attempts so far. */
      readonly attempts: number;
      readonly deliveries: number;
      /** When a failed answer or delivery may be tried again (ms). */
      readonly retryAt: number | null;
      readonly answer: { readonly answerId: string; readonly text: string } | null;
      readonly lastError: string | null;
    };

export const messageAggregate: Aggregate<MessageState> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event: RecordedEvent): MessageState => {
    if (event.type === 'ChatMessageReceived')
      return {
        status: 'received',
        message: event.data,
        claim: null,
        attempts: 0,
        deliveries: 0,
        retryAt: null,
        answer: null,
        lastError: null,
      };
    if (state.status === 'none') return state;
    switch (event.type) {
      case 'ChatAnswerClaimed': {
        const d = event.data;
        return {
          ...state,
          status: 'claimed',
          claim: {
            claimId: d.claimId,
            node: d.node,
            purpose: d.purpose,
            leaseUntil: Date.parse(d.leaseUntil),
          },
          attempts: d.purpose === 'answer' ? d.attempt : state.attempts,
          deliveries: d.purpose === 'deliver' ? d.attempt : state.deliveries,
        };
      }
      case 'ChatAnswered':
        return {
          ...state,
          status: 'answered',
          answer: { answerId: event.data.answerId, text: event.data.text },
          retryAt: null,
          lastError: null,
        };
      case 'ChatAnswerFailed': {
        const d = event.data;
        return {
          ...state,
          status: d.retryAt === null ? 'given_up' : 'failed',
          claim: null,
          retryAt: d.retryAt === null ? null : Date.parse(d.retryAt),
          lastError: d.error,
        };
      }
      case 'ChatAnswerDelivered':
        return { ...state, status: 'delivered', claim: null, retryAt: null, lastError: null };
      case 'ChatDeliveryFailed': {
        const d = event.data;
        return {
          ...state,
          status: d.retryAt === null ? 'given_up' : 'answered',
          deliveries: Math.max(state.deliveries, d.attempt),
          claim: null,
          retryAt: d.retryAt === null ? null : Date.parse(d.retryAt),
          lastError: d.error,
        };
      }
      default:
        return state;
    }
  },
};

/** A chatbot's channel health: one stream per chatbot and channel. */
export const channelStream = (chatbotId: bigint | number, channel: Channel) =>
  `chatchannel-${chatbotId}-${channel}`;

/** The error of the failure streak the channel is in, or null when it works. */
export type ChannelHealthState = { readonly failing: string | null };

export const channelHealthAggregate: Aggregate<ChannelHealthState> = {
  initialState: () => ({ failing: null }),
  evolve: (state, event: RecordedEvent): ChannelHealthState => {
    switch (event.type) {
      case 'ChatChannelFailed':
        return { failing: event.data.error };
      case 'ChatChannelRecovered':
        return { failing: null };
      default:
        return state;
    }
  },
};
