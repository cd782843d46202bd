import type { Channel } from '../../events';
import { settled, type AppContext } from '../context';
import { conflict } from '../shared/errors';
import { decideChannelHealth, decideMessage, type MessageCommand } from './decider';
import { presentConversation, type ConversationItem } from './present';
import { conversationAfter, messageRow } from './projection';
import { channelHealthAggregate, channelStream, messageAggregate, messageKey, messageStream } from './state';

/** A chatbot as its conversations need it: who it is, whether it runs, what answers and where. */
export type ChatbotInfo = {
  readonly id: bigint;
  readonly projectId: bigint;
  readonly project: string;
  readonly name: string;
  readonly agent: string | null;
  readonly modelName: string | null;
  readonly isRunning: boolean;
  /** The chat database: its name, id and engine (`slack`, `telegram`, `webhook`, or a SQL engine). */
  readonly database: string | null;
  readonly databaseId: bigint | null;
  readonly engine: string | null;
  readonly webhookToken: string | null;
};

/** What conversations need of the chatbots capability (filled by the composition root). */
export type ChatbotDirectory = {
  /** A chatbot by project and name (404 otherwise). */
  require(project: string, ref: string): Promise<ChatbotInfo>;
  byId(id: bigint): Promise<ChatbotInfo | undefined>;
  byWebhookToken(token: string): Promise<ChatbotInfo | undefined>;
  running(): Promise<ChatbotInfo[]>;
};

export type InboundMessage = {
  readonly channel: Channel;
  readonly chatId: string;
  readonly user: string;
  readonly text: string;
  readonly externalId: string | null;
  readonly channelMessageId: string | null;
  readonly threadId: string | null;
};

/** A command on one message's stream, stamped with the clock. */
export const runOnMessage = async (
  ctx: AppContext,
  stream: string,
  command: Omit<MessageCommand, 'metadata'> & { metadata?: unknown },
) => {
  const stamped = { ...command, metadata: { now: ctx.clock() } } as MessageCommand;
  return ctx.commands.run(stream, messageAggregate, (s) => decideMessage(stamped, s));
};

/**
 * Conversations with chatbots: inbound messages recorded (each once), read back in order with their
 * answers, followed live; the processor (processor.ts) answers them.
 */
export const chatMessagesService = (ctx: AppContext, options: { wake: () => void; waitMs: number }) => {
  /**
   * Records an inbound message once (the channel's own id makes a redelivery the same message) and
   * wakes the processor. A stopped chatbot takes no messages: the caller says so (409).
   */
  const receive = async (bot: ChatbotInfo, inbound: InboundMessage) => {
    if (!bot.isRunning)
      throw conflict(
        `Chatbot ${bot.name} is not running: start it (is_running = true) before sending it messages`,
        'Chatbot not running',
      );
    const key = messageKey(bot.id, inbound.channel, inbound.chatId, inbound.externalId);
    const stream = messageStream(bot.id, key);
    const outcome = await runOnMessage(ctx, stream, {
      type: 'Receive',
      data: {
        messageId: key,
        chatbotId: Number(bot.id),
        projectId: Number(bot.projectId),
        project: bot.project,
        chatbot: bot.name,
        channel: inbound.channel,
        chatId: inbound.chatId,
        user: inbound.user,
        text: inbound.text,
        externalId: inbound.externalId,
        channelMessageId: inbound.channelMessageId,
        threadId: inbound.threadId,
        receivedAt: ctx.clock().toISOString(),
      },
    });
    await settled(ctx, outcome.lastPosition);
    options.wake();
    return { messageId: key, duplicate: outcome.events.length === 0 };
  };

  /** Until the message is answered (or given up), at most `waitMs`; what it became. */
  const waitForAnswer = async (messageId: string, signal?: AbortSignal) => {
    const until = Date.now() + options.waitMs;
    for (;;) {
      const row = await messageRow(ctx.duck, messageId);
      if (row && (row.ANSWER_ID !== null || row.STATUS === 'given_up')) return row;
      if (Date.now() >= until || signal?.aborted) return row;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  /** Records that the bot's way in fails (`error`) or works again (null); once per change. */
  const reportChannel = async (bot: ChatbotInfo, channel: Channel, error: string | null) => {
    const metadata = { now: ctx.clock() };
    const data = { chatbotId: Number(bot.id), channel };
    const outcome = await ctx.commands.run(channelStream(bot.id, channel), channelHealthAggregate, (s) =>
      decideChannelHealth(
        error === null
          ? { type: 'ReportChannelRecovery', data, metadata }
          : { type: 'ReportChannelFailure', data: { ...data, error }, metadata },
        s,
      ),
    );
    if (outcome.events.length > 0) await settled(ctx, outcome.lastPosition);
  };

  return {
    receive,
    reportChannel,
    waitForAnswer,

    /** The conversation after `after` (a position), messages and answers in order. */
    conversation: async (
      bot: ChatbotInfo,
      chatId: string | null,
      after: bigint,
      limit: number,
    ): Promise<ConversationItem[]> => {
      const rows = await conversationAfter(ctx.duck, bot.id, chatId, after, limit);
      return presentConversation(rows, after).slice(0, limit);
    },
  };
};

export type ChatMessagesService = ReturnType<typeof chatMessagesService>;
