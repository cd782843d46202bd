import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const chatMessageResource: ResourceDeclaration = { kind: 'chatMessage', id: 'messageId' };
const chatChannelResource: ResourceDeclaration = { kind: 'chatChannel', id: 'chatbotId' };

/**
 * A chatbot's conversations. Each inbound message is a stream of its own (`chat-<chatbot id>-<key>`,
 * the key derived from the channel's message id when it has one, so a message delivered twice by
 * its channel is one stream and recorded once) holding its whole life: received, claimed by the
 * process that answers it (a lease, taken over when it expires), answered or failed (retried with
 * backoff), delivered to its channel. The claim is decided on the message's stream, so exactly one
 * answer is ever recorded for it, however many processes try.
 */
export const CHANNELS = ['builtin', 'webhook', 'slack', 'telegram'] as const;
export type Channel = (typeof CHANNELS)[number];

export const ChatMessageReceived = defineEvent(
  'ChatMessageReceived',
  z.object({
    messageId: z.string(),
    chatbotId: z.number().int(),
    projectId: z.number().int(),
    project: z.string(),
    chatbot: z.string(),
    channel: z.enum(CHANNELS),
    chatId: z.string().max(256),
    user: z.string().max(256),
    text: z.string().max(64 * 1024),
    /** The channel's own id for the message (Slack event id, Telegram update id), when it has one. */
    externalId: z.string().max(256).nullable(),
    /** The channel's id of the message itself, which an answer replies to (Telegram message id, Slack ts). */
    channelMessageId: z.string().max(256).nullable(),
    /** Where an answer goes within the chat: a Slack thread, a Telegram topic. */
    threadId: z.string().max(256).nullable(),
    receivedAt: z.iso.datetime(),
  }),
  { resource: chatMessageResource },
);

export const ChatAnswerClaimed = defineEvent(
  'ChatAnswerClaimed',
  z.object({
    messageId: z.string(),
    chatbotId: z.number().int(),
    claimId: z.string(),
    /** Which process (host, pid, start) holds the claim. */
    node: z.string(),
    /** To answer it, or (answered already) only to deliver the answer. */
    purpose: z.enum(['answer', 'deliver']),
    attempt: z.number().int().min(1),
    leaseUntil: z.iso.datetime(),
    claimedAt: z.iso.datetime(),
  }),
  { resource: chatMessageResource },
);

export const ChatAnswered = defineEvent(
  'ChatAnswered',
  z.object({
    messageId: z.string(),
    chatbotId: z.number().int(),
    claimId: z.string(),
    answerId: z.string(),
    text: z.string(),
    /** The agent run that produced it (its own stream, `agent-run-<trace id>`). */
    traceId: z.string().nullable(),
    answeredAt: z.iso.datetime(),
  }),
  { resource: chatMessageResource },
);

export const ChatAnswerFailed = defineEvent(
  'ChatAnswerFailed',
  z.object({
    messageId: z.string(),
    chatbotId: z.number().int(),
    claimId: z.string(),
    attempt: z.number().int().min(1),
    error: z.string(),
    /** When to try again; null: no more attempts (the message stays unanswered, the error says why). */
    retryAt: z.iso.datetime().nullable(),
    failedAt: z.iso.datetime(),
  }),
  { resource: chatMessageResource },
);

export const ChatAnswerDelivered = defineEvent(
  'ChatAnswerDelivered',
  z.object({
    messageId: z.string(),
    chatbotId: z.number().int(),
    claimId: z.string(),
    answerId: z.string(),
    channel: z.enum(CHANNELS),
    /** The channel's id for the posted answer (Slack ts, Telegram message id), when it gives one. */
    externalId: z.string().nullable(),
    deliveredAt: z.iso.datetime(),
  }),
  { resource: chatMessageResource },
);

export const ChatDeliveryFailed = defineEvent(
  'ChatDeliveryFailed',
  z.object({
    messageId: z.string(),
    chatbotId: z.number().int(),
    claimId: z.string(),
    answerId: z.string(),
    attempt: z.number().int().min(1),
    error: z.string(),
    retryAt: z.iso.datetime().nullable(),
    failedAt: z.iso.datetime(),
  }),
  { resource: chatMessageResource },
);

/**
 * A chatbot's way in stopped working (Telegram refused the token, Slack revoked the app): recorded
 * once per failure streak on the stream `chatchannel-<chatbot id>-<channel>`, so `last_error` says
 * why a bot that runs hears nothing.
 */
export const ChatChannelFailed = defineEvent(
  'ChatChannelFailed',
  z.object({
    chatbotId: z.number().int(),
    channel: z.enum(CHANNELS),
    error: z.string(),
    failedAt: z.iso.datetime(),
  }),
  { resource: chatChannelResource },
);

/** The channel works again after a failure streak. */
export const ChatChannelRecovered = defineEvent(
  'ChatChannelRecovered',
  z.object({
    chatbotId: z.number().int(),
    channel: z.enum(CHANNELS),
    recoveredAt: z.iso.datetime(),
  }),
  { resource: chatChannelResource },
);

export type ChatMessageReceived = EventOf<typeof ChatMessageReceived>;
export type ChatChannelFailed = EventOf<typeof ChatChannelFailed>;
export type ChatChannelRecovered = EventOf<typeof ChatChannelRecovered>;
export type ChatAnswerClaimed = EventOf<typeof ChatAnswerClaimed>;
export type ChatAnswered = EventOf<typeof ChatAnswered>;
export type ChatAnswerFailed = EventOf<typeof ChatAnswerFailed>;
export type ChatAnswerDelivered = EventOf<typeof ChatAnswerDelivered>;
export type ChatDeliveryFailed = EventOf<typeof ChatDeliveryFailed>;
export type ChatMessageEvent =
  | ChatMessageReceived
  | ChatAnswerClaimed
  | ChatAnswered
  | ChatAnswerFailed
  | ChatAnswerDelivered
  | ChatDeliveryFailed
  | ChatChannelFailed
  | ChatChannelRecovered;
export const chatMessageContracts = [
  ChatMessageReceived,
  ChatAnswerClaimed,
  ChatAnswered,
  ChatAnswerFailed,
  ChatAnswerDelivered,
  ChatDeliveryFailed,
  ChatChannelFailed,
  ChatChannelRecovered,
] as const;
