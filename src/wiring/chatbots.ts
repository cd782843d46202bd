import type { AgentRunsService } from '../agentRuns/service';
import type { ChatbotsService } from '../chatbots/service';
import { channelPorts } from '../chatMessages/channels';
import { chatProcessor, type ChatProcessor } from '../chatMessages/processor';
import {
  chatMessagesService,
  type ChatbotDirectory,
  type ChatMessagesService,
} from '../chatMessages/service';
import { telegramPollers } from '../chatMessages/telegramPoller';
import { chatbotInfoOf, type ChatbotRowLike } from '../chatMessages/wiring';
import type { AppContext } from '../context';
import type { DatabasesService } from '../databases/service';
import { invalid } from '../shared/errors';
import { withRequest } from '../shared/requestContext';

/**
 * The chatbots' part of the composition root (src/app.ts): chat messages read chatbots, their
 * channels' integrations and their agents through ports, and filling those ports is wiring of its
 * own, kept apart so the root stays a list of services.
 */

/** What the chatbot wiring reads from the services built before it. */
type ChatbotWiringPorts = {
  readonly chatbots: ChatbotsService;
  readonly databases: DatabasesService;
  readonly agentRuns: AgentRunsService;
};

/** The chat messages service and the chatbot runtime (directory, channels, answers) it runs on. */
export const chatbotServices = (ctx: AppContext, { chatbots, databases, agentRuns }: ChatbotWiringPorts) => {
  // Conversations see chatbots as rows of the read model, with their channel's engine.
  const chatbotInfo = async (row: ChatbotRowLike) =>
    chatbotInfoOf(
      row,
      row.DATABASE === null ? null : ((await databases.findIntegration(row.DATABASE))?.engine ?? null),
    );
  const chatDirectory: ChatbotDirectory = {
    require: async (project, ref) => chatbotInfo(await chatbots.rows.require(project, ref)),
    byId: async (id) => {
      const row = await chatbots.rows.byId(id);
      return row ? chatbotInfo(row) : undefined;
    },
    byWebhookToken: async (token) => {
      const row = await chatbots.rows.byWebhookToken(token);
      return row ? chatbotInfo(row) : undefined;
    },
    running: async () => Promise.all((await chatbots.rows.running()).map(chatbotInfo)),
  };
  const processing: { processor?: ChatProcessor } = {};
  const chatMessages = chatMessagesService(ctx, {
    wake: () => processing.processor?.wake(),
    waitMs: ctx.config.chatbots.waitMs,
  });
  const channels = channelPorts({
    connection: (name) => databases.channelConnection(name),
    slackApiBaseUrl: ctx.config.chatbots.slackApiBaseUrl,
    telegramApiBaseUrl: ctx.config.chatbots.telegramApiBaseUrl,
    requestTimeoutMs: ctx.config.llm.requestTimeoutMs,
    fetch: ctx.config.outbound.fetch,
  });
  const chatbotRuntime = {
    directory: chatDirectory,
    processing,
    channels,
    /** A chatbot's answer: its agent's, with the conversation so far as the agent's memory. */
    answer: async (
      bot: Awaited<ReturnType<ChatbotDirectory['require']>>,
      history: readonly { question: string; answer: string }[],
      question: string,
      signal: AbortSignal,
    ) => {
      if (bot.agent === null)
        throw invalid(
          `Chatbot ${bot.name} has no agent: only agents answer here (model_name ${bot.modelName ?? '(none)'} cannot chat); give it agent_name`,
          'Chatbot cannot answer',
        );
      const completion = await agentRuns.complete(
        {
          project: bot.project,
          agent: bot.agent,
          messages: [
            ...history.map((h) => ({ question: h.question, answer: h.answer })),
            { question, answer: null },
          ],
          via: 'chatbot',
        },
        { signal },
      );
      return { text: completion.answer, traceId: completion.traceId };
    },
  };
  return { chatMessages, chatbotRuntime };
};
type ChatbotRuntime = ReturnType<typeof chatbotServices>['chatbotRuntime'];

/**
 * Starts what chatbots do on their own: the message processor (claims, answers, deliveries) and
 * Telegram's long polling, when the configuration turns the processor on. The caller stops both.
 */
export const startChatbotWork = (
  ctx: AppContext,
  services: { readonly chatbotRuntime: ChatbotRuntime; readonly chatMessages: ChatMessagesService },
) => {
  // Every process answers chatbots' messages; claims on each message share the work out.
  const chat = ctx.config.chatbots;
  const retryBackoff = (attempt: number) =>
    Math.min(chat.retryMaxMs, chat.retryBaseMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
  const processor = chatProcessor(
    ctx,
    {
      bots: services.chatbotRuntime.directory,
      answer: services.chatbotRuntime.answer,
      deliverer: services.chatbotRuntime.channels.deliverer,
    },
    {
      leaseMs: chat.leaseMs,
      pollMs: chat.pollMs,
      concurrency: chat.concurrency,
      maxAttempts: chat.maxAttempts,
      maxDeliveries: chat.maxDeliveries,
      memoryMessages: chat.memoryMessages,
      backoff: retryBackoff,
    },
  );
  services.chatbotRuntime.processing.processor = processor;
  // Telegram has no push without a public URL: running Telegram chatbots are long-polled.
  const pollers = telegramPollers(
    {
      bots: services.chatbotRuntime.directory,
      telegramOf: services.chatbotRuntime.channels.telegramOf,
      receive: (bot, message) => services.chatMessages.receive(bot, message),
      report: (bot, error) => services.chatMessages.reportChannel(bot, 'telegram', error),
      logger: ctx.logger,
    },
    { refreshMs: Math.max(chat.pollMs, 200), pollSeconds: chat.telegramPollSeconds, backoff: retryBackoff },
  );
  if (chat.processor)
    // What chatbots do on their own (claims, answers, deliveries) is recorded as the chatbot interface's.
    withRequest(
      { requestId: 'chatbot-processor', interface: 'chatbot', actor: { kind: 'system', id: 'chatbot' } },
      () => {
        processor.start();
        pollers.start();
      },
    );
  return { processor, pollers };
};
