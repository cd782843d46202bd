import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { readResponses } from '../http/resourceRoutes';
import { badGateway, notFound } from '../shared/errors';
import type { ChatMessageRow } from './projection';
import {
  chatbotPath,
  conversationQuery,
  conversationView,
  postedMessageView,
  postMessageBody,
  postMessageQuery,
  webhookPath,
} from './schemas';
import type { WebhookInbound } from './channels';
import type { ChatbotDirectory, ChatMessagesService } from './service';

const posted = (row: ChatMessageRow | undefined, messageId: string, chatId: string, duplicate: boolean) => ({
  message_id: messageId,
  chat_id: chatId,
  duplicate,
  status: row?.STATUS ?? 'received',
  answer:
    row && row.ANSWER_ID !== null && row.ANSWER !== null
      ? { text: row.ANSWER, answer_id: row.ANSWER_ID, trace_id: row.TRACE_ID }
      : null,
  error: row?.LAST_ERROR ?? null,
});

export const chatMessageRoutes = (
  api: Api,
  chats: ChatMessagesService,
  bots: ChatbotDirectory,
  inbound: WebhookInbound,
  options: { streamPollMs: number },
) =>
  api
    .add({
      method: 'post',
      path: '/api/projects/:project/chatbots/:chatbot/messages',
      tag: 'chatbots',
      summary:
        "Send a chatbot a message (the built-in channel): 202 once recorded; ?wait=true answers with the bot's reply",
      params: chatbotPath,
      query: postMessageQuery,
      body: postMessageBody,
      responses: {
        200: { description: 'Answered (wait=true)', schema: postedMessageView },
        202: { description: 'Recorded; the answer follows (GET …/messages)', schema: postedMessageView },
        404: problem('Unknown project or chatbot'),
        409: problem('The chatbot is not running'),
        502: problem('The bot gave up on the message (wait=true): the error says why'),
      },
      handle: async ({ params, query, body, signal }) => {
        const bot = await bots.require(params.project, params.chatbot);
        const { messageId, duplicate } = await chats.receive(bot, {
          channel: 'builtin',
          chatId: body.chat_id,
          user: body.user,
          text: body.text,
          externalId: body.message_id ?? null,
          channelMessageId: body.message_id ?? null,
          threadId: null,
        });
        const wait = query.wait === 'true' || query.wait === '1';
        if (!wait) return { status: 202, body: posted(undefined, messageId, body.chat_id, duplicate) };
        const row = await chats.waitForAnswer(messageId, signal);
        if (row?.STATUS === 'given_up')
          throw badGateway(
            `Chatbot ${bot.name} gave up on message ${messageId}: ${row.LAST_ERROR ?? 'no reason recorded'}`,
            'Chatbot could not answer',
          );
        const answered = row !== undefined && row.ANSWER_ID !== null;
        return { status: answered ? 200 : 202, body: posted(row, messageId, body.chat_id, duplicate) };
      },
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/chatbots/:chatbot/messages',
      tag: 'chatbots',
      summary: 'A conversation: messages and answers in order (seq), after a seq, for one chat or all',
      params: chatbotPath,
      query: conversationQuery,
      responses: readResponses('Messages and answers', conversationView, 'Unknown project or chatbot'),
      handle: async ({ params, query }) => {
        const bot = await bots.require(params.project, params.chatbot);
        return {
          status: 200,
          body: await chats.conversation(bot, query.chat_id ?? null, BigInt(query.after ?? '0'), query.limit),
        };
      },
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/chatbots/:chatbot/messages/stream',
      tag: 'chatbots',
      summary: 'Follow a conversation live (text/event-stream): each message and answer as it is recorded',
      params: chatbotPath,
      query: conversationQuery,
      responses: {
        200: { description: 'Server-sent events, one conversation item each' },
        404: problem('Unknown project or chatbot'),
      },
      handle: async ({ params, query }) => {
        const bot = await bots.require(params.project, params.chatbot);
        let cursor = BigInt(query.after ?? '0');
        return {
          status: 200,
          eventStream: {
            produce: async (send, signal) => {
              while (!signal.aborted) {
                const items = await chats.conversation(bot, query.chat_id ?? null, cursor, query.limit);
                for (const item of items) {
                  send(item);
                  if (BigInt(item.seq) > cursor) cursor = BigInt(item.seq);
                }
                await new Promise((r) => setTimeout(r, options.streamPollMs));
              }
            },
            onError: (error) => ({ type: 'error', content: (error as Error).message }),
          },
        };
      },
    })
    .add({
      method: 'post',
      path: '/api/webhooks/chatbots/:token',
      tag: 'chatbots',
      summary:
        "A chatbot's incoming webhook (MindsDB's route): Slack Events API requests for a Slack chatbot, else {chat_id, user, text, message_id}",
      params: webhookPath,
      body: z.unknown(),
      responses: {
        200: { description: 'Recorded (or ignored, saying why); a Slack URL check gets its challenge back' },
        401: problem('The signature does not match'),
        404: problem('No chatbot has this token'),
        409: problem('The chatbot is not running'),
      },
      handle: async ({ params, body, headers, request }) => {
        const bot = await bots.byWebhookToken(params.token);
        if (!bot) throw notFound('No chatbot has this webhook token', 'Unknown webhook');
        const rawBody =
          (request as { rawBody?: Buffer }).rawBody ?? Buffer.from(JSON.stringify(body ?? null));
        const read = await inbound(bot, { headers, rawBody, body });
        if (read.kind === 'challenge') return { status: 200, body: { challenge: read.challenge } };
        if (read.kind === 'ignored') return { status: 200, body: { ok: true, ignored: read.reason } };
        const { messageId, duplicate } = await chats.receive(bot, read.message);
        return { status: 200, body: { ok: true, message_id: messageId, duplicate } };
      },
    });
