import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Channel } from '../../events';
import {
  slackChannel,
  telegramChannel,
  verifyWebhookSignature,
  webhookChannel,
  webhookInbound,
  webhookInboundBody,
  type InboundMessage as ChannelInbound,
  type SlackChannel,
  type TelegramChannel,
  type WebhookChannel,
} from '../channels';
import { invalid, unauthorized } from '../shared/errors';
import type { Deliverer } from './processor';
import type { ChatbotInfo, InboundMessage } from './service';

type ChannelConnection = { engine: string; parameters: Record<string, unknown> };

type ChannelPortsOptions = {
  /** A chat database's engine and parameters (secrets included, read from the log). */
  connection(databaseName: string): Promise<ChannelConnection | undefined>;
  slackApiBaseUrl: string;
  telegramApiBaseUrl: string;
  requestTimeoutMs: number;
  /** The outbound policy's fetch (OUTBOUND_ALLOW): every channel call's destination checked. */
  fetch?: typeof fetch;
};

type Sender = SlackChannel | TelegramChannel | WebhookChannel;

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/** An adapter's inbound message as a conversation records it. */
export const asInbound = (channel: Channel, m: ChannelInbound): InboundMessage => ({
  channel,
  chatId: m.chatId,
  user: m.user,
  text: m.text,
  externalId: m.externalId,
  channelMessageId: m.messageId ?? null,
  threadId: m.threadId ?? null,
});

/** An incoming webhook request: its headers, its body as sent (signatures are of it) and as parsed. */
type WebhookRequest = { headers: IncomingHttpHeaders; rawBody: Buffer; body: unknown };

/** What an incoming webhook request is: Slack's URL check, a message to answer, or nothing to answer. */
type WebhookArrival =
  | { kind: 'challenge'; challenge: string }
  | { kind: 'message'; message: InboundMessage }
  | { kind: 'ignored'; reason: string };

/** How the incoming webhook route reads a request for a chatbot, by its channel (`inbound` below, given it by the composition root). */
export type WebhookInbound = (bot: ChatbotInfo, request: WebhookRequest) => Promise<WebhookArrival>;

/** A channel adapter for a connection's engine and parameters (its token checked present). */
const newAdapter = (connection: ChannelConnection, options: ChannelPortsOptions): Sender => {
  const p = connection.parameters;
  const timeoutMs = options.requestTimeoutMs;
  const token = text(p.token);
  switch (connection.engine) {
    case 'slack':
      if (!token) throw invalid('The Slack connection has no token');
      return slackChannel(
        { token, signing_secret: text(p.signing_secret) },
        { baseUrl: options.slackApiBaseUrl, timeoutMs, fetch: options.fetch },
      );
    case 'telegram':
      if (!token) throw invalid('The Telegram connection has no token');
      return telegramChannel(
        { token },
        { baseUrl: options.telegramApiBaseUrl, timeoutMs, fetch: options.fetch },
      );
    case 'webhook': {
      const url = text(p.url);
      if (!url) throw invalid('The webhook connection has no url');
      return webhookChannel({ url, secret: text(p.secret) }, { timeoutMs, fetch: options.fetch });
    }
    default:
      throw invalid(`Engine ${connection.engine} is not a chat channel (slack, telegram or webhook)`);
  }
};

/** The generic webhook's `{chat_id, user, text, message_id}`, signed with the connection's secret when it has one. */
const genericInbound = (
  connection: ChannelConnection | undefined,
  request: WebhookRequest,
): WebhookArrival => {
  const secret = connection?.engine === 'webhook' ? text(connection.parameters.secret) : null;
  if (secret) {
    const verified = verifyWebhookSignature(secret, request.headers, request.rawBody);
    if (!verified.ok) throw unauthorized(`Webhook signature rejected: ${verified.reason}`);
  }
  const parsed = webhookInboundBody.safeParse(request.body);
  if (!parsed.success)
    throw invalid(
      `The webhook body must be {chat_id, text, user?, message_id?, thread_id?}: ${parsed.error.issues
        .map((i) => `${i.path.join('.') || '(body)'} ${i.message}`)
        .join('; ')}`,
    );
  const message = webhookInbound(parsed.data);
  if (message.fromBot) return { kind: 'ignored', reason: 'written by a bot' };
  return { kind: 'message', message: asInbound('webhook', message) };
};

/** A Slack Events API request: its signature checked, the bot's own posts ignored. */
const slackInbound = async (slack: SlackChannel, request: WebhookRequest): Promise<WebhookArrival> => {
  const verified = slack.verify(request.headers, request.rawBody);
  if (!verified.ok) throw unauthorized(`Slack request signature rejected: ${verified.reason}`);
  // The bot's own user id marks its own posts (echoes of our answers); asked once per token.
  const botUserId = await slack.botUserId().catch(() => null);
  const read = slack.parse(request.body, { botUserId });
  if (read.kind === 'invalid') throw invalid(`Not a Slack Events API request: ${read.reason}`);
  if (read.kind !== 'message') return read;
  if (read.message.fromBot) return { kind: 'ignored', reason: 'written by a bot' };
  return { kind: 'message', message: asInbound('slack', read.message) };
};

/**
 * The chatbots' ways in and out through the channel adapters (src/channels). A chatbot's `database`
 * names its channel connection (a slack, telegram or webhook integration); its tokens and secrets are
 * read from the log each time the connection changes, and never leave this module.
 */
export const channelPorts = (options: ChannelPortsOptions) => {
  // One adapter per connection (keyed by its parameters), so what an adapter learns (Slack's bot user
  // id) is asked once; a changed token makes a new adapter.
  const adapters = new Map<string, Sender>();

  const adapterOf = (connection: ChannelConnection): Sender => {
    const p = connection.parameters;
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify([connection.engine, p]))
      .digest('hex');
    const known = adapters.get(key);
    if (known) return known;
    const adapter = newAdapter(connection, options);
    if (adapters.size > 1000) adapters.clear();
    adapters.set(key, adapter);
    return adapter;
  };

  /** The bot's channel connection, or undefined when it has none (the built-in channel only). */
  const connectionOf = async (bot: ChatbotInfo) => {
    if (bot.database === null) return undefined;
    const connection = await options.connection(bot.database);
    if (!connection)
      throw invalid(
        `Chatbot ${bot.name}'s database ${bot.database} is not a chat channel connection (slack, telegram or webhook)`,
      );
    return connection;
  };

  const slackOf = async (bot: ChatbotInfo) => {
    const connection = await connectionOf(bot);
    if (connection?.engine !== 'slack') return undefined;
    return adapterOf(connection) as SlackChannel;
  };

  const telegramOf = async (bot: ChatbotInfo) => {
    const connection = await connectionOf(bot);
    if (connection?.engine !== 'telegram') return undefined;
    return adapterOf(connection) as TelegramChannel;
  };

  return {
    /**
     * How an answer to a message that came in on `channel` goes out: to Slack or Telegram through the
     * bot's connection; a message from the generic webhook goes to the bot's outgoing webhook when it
     * has one (else it is read back with GET …/messages, as built-in messages are).
     */
    deliverer: async (bot: ChatbotInfo, channel: Channel): Promise<Deliverer | null> => {
      if (channel === 'builtin') return null;
      const connection = await connectionOf(bot);
      if (channel === 'webhook' && connection?.engine !== 'webhook') return null;
      if (!connection || connection.engine !== channel)
        throw invalid(
          `Chatbot ${bot.name} received a ${channel} message but its database ${bot.database ?? '(none)'} is ${connection?.engine ?? 'not a channel'}: answers cannot go back`,
        );
      const adapter = adapterOf(connection);
      return {
        deliver: (answer, signal) =>
          adapter.deliver(
            {
              chatId: answer.chatId,
              text: answer.text,
              answerId: answer.answerId,
              inReplyTo: answer.inReplyTo,
              threadId: answer.threadId,
            },
            signal,
          ),
      };
    },

    /**
     * The incoming webhook, by the bot's channel: Slack's Events API (signature checked when the
     * connection has a signing secret; the bot's own posts ignored), a Telegram Update (a bot set up
     * with setWebhook instead of polling), or the generic `{chat_id, user, text, message_id}` (signed
     * with the webhook connection's secret, when it has one).
     */
    inbound: async (bot: ChatbotInfo, request: WebhookRequest): Promise<WebhookArrival> => {
      const connection = await connectionOf(bot);
      if (connection?.engine === 'slack') return slackInbound(adapterOf(connection) as SlackChannel, request);
      if (connection?.engine === 'telegram') {
        const telegram = adapterOf(connection) as TelegramChannel;
        const read = telegram.parseUpdate(request.body);
        if (read.kind === 'ignored') return read;
        if (read.message.fromBot) return { kind: 'ignored', reason: 'written by a bot' };
        return { kind: 'message', message: asInbound('telegram', read.message) };
      }
      return genericInbound(connection, request);
    },

    slackOf,
    telegramOf,
  };
};
