import { ChannelError, parseTelegramUpdate, telegramChannel, type TelegramChannel } from '../../src/channels';
import { startFakeTelegram, telegramFailure, type FakeTelegram } from '../support/fakeTelegram';
import { closedPort, rejection } from './receiver';

const TOKEN = '123456789:AAF-secretTelegramTokenValue_xyz';

const outbound = (
  fields: Partial<{ chatId: string; text: string; inReplyTo: string | null; threadId: string | null }> = {},
) => ({
  chatId: '4242',
  text: 'There are 42 orders.',
  answerId: 'answer-1',
  inReplyTo: null,
  ...fields,
});

const until = async (condition: () => boolean, timeoutMs = 2000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('Telegram channel against a fake Bot API on a real socket', () => {
  let fake: FakeTelegram;
  let telegram: TelegramChannel;

  beforeAll(async () => {
    fake = await startFakeTelegram({ token: TOKEN });
  });
  beforeEach(() => {
    telegram = telegramChannel({ token: TOKEN }, { baseUrl: fake.baseUrl, timeoutMs: 2000 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  describe('inbound: getUpdates long polling', () => {
    it('returns as soon as a message arrives during the long poll', async () => {
      // A long poll that outlasts the test: returning at all says the message ended it.
      const polling = telegram.poll(null, { timeoutSeconds: 50 });
      await until(() => fake.polling());
      const update = fake.pushMessage({
        chatId: 4242,
        text: 'how many orders?',
        from: { username: 'alice' },
      });

      const result = await polling;

      expect(result).toEqual({
        messages: [
          {
            chatId: '4242',
            user: 'alice',
            text: 'how many orders?',
            externalId: String(update.update_id),
            fromBot: false,
            threadId: null,
            messageId: String(update.message.message_id),
            receivedAt: new Date(update.message.date * 1000).toISOString(),
          },
        ],
        nextOffset: update.update_id + 1,
      });
      const [request] = fake.requests();
      expect(request?.method).toBe('getupdates');
      expect(request?.params).toEqual({ timeout: 50 });
      expect(request?.headers['content-type']).toBe('application/json');
    });

    it('holds for the poll timeout when nothing comes, within an HTTP deadline that outlasts it', async () => {
      // The per-request timeout (200 ms) is far below the long poll: the poll must still end normally.
      const short = telegramChannel({ token: TOKEN }, { baseUrl: fake.baseUrl, timeoutMs: 200 });
      const started = Date.now();

      const result = await short.poll(7, { timeoutSeconds: 1 });

      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(result).toEqual({ messages: [], nextOffset: 7 });
      expect(fake.requests()[0]?.params).toEqual({ offset: 7, timeout: 1 });
    });

    it('honours the offset: updates come back until confirmed, and never after', async () => {
      const first = fake.pushMessage({ chatId: 1, text: 'one' });
      fake.pushMessage({ chatId: 2, text: 'two' });

      const a = await telegram.poll(null, { timeoutSeconds: 0 });
      const again = await telegram.poll(null, { timeoutSeconds: 0 });
      expect(a.messages.map((m) => m.text)).toEqual(['one', 'two']);
      expect(again.messages.map((m) => m.text)).toEqual(['one', 'two']);
      expect(a.nextOffset).toBe(first.update_id + 2);

      const b = await telegram.poll(a.nextOffset, { timeoutSeconds: 0 });
      expect(b).toEqual({ messages: [], nextOffset: a.nextOffset });
      expect(fake.pending()).toEqual([]);

      fake.pushMessage({ chatId: 1, text: 'three' });
      const c = await telegram.poll(b.nextOffset, { timeoutSeconds: 0 });
      expect(c.messages.map((m) => [m.chatId, m.text])).toEqual([['1', 'three']]);
      expect(c.nextOffset).toBe(first.update_id + 3);
    });

    it('skips updates that are not text messages, but moves the offset past them', async () => {
      fake.pushUpdate({
        edited_message: { message_id: 1, chat: { id: 5, type: 'private' }, date: 1, text: 'edited' },
      });
      fake.pushUpdate({
        message: { message_id: 2, chat: { id: 5, type: 'private' }, date: 1, photo: [{ file_id: 'x' }] },
      });
      const callback = fake.pushUpdate({ callback_query: { id: 'q1', data: 'yes' } });

      const result = await telegram.poll(null, { timeoutSeconds: 0 });

      expect(result).toEqual({ messages: [], nextOffset: callback.update_id + 1 });
      await telegram.poll(result.nextOffset, { timeoutSeconds: 0 });
      expect(fake.pending()).toEqual([]);
    });

    it('flags bots, names users, and reads group chats and forum topics', async () => {
      fake.pushMessage({ chatId: 10, text: 'beep', from: { id: 99, is_bot: true, username: 'other_bot' } });
      fake.pushMessage({
        chatId: 11,
        text: 'hello',
        from: { id: 11, first_name: 'Bob', last_name: 'Smith', username: undefined },
      });
      const topic = fake.pushMessage({
        chatId: -100123,
        text: 'in a topic',
        from: { id: 12, username: 'carol' },
        threadId: 77,
      });
      fake.pushUpdate({
        message: {
          message_id: 9,
          sender_chat: { id: -100555, title: 'News' },
          chat: { id: -100555, type: 'channel' },
          date: 1,
          text: 'post',
        },
      });

      const { messages } = await telegram.poll(null, { timeoutSeconds: 0 });

      expect(messages.map((m) => [m.chatId, m.user, m.fromBot, m.threadId])).toEqual([
        ['10', 'other_bot', true, null],
        ['11', 'Bob Smith', false, null],
        ['-100123', 'carol', false, '77'],
        ['-100555', 'News', false, null],
      ]);
      expect(messages[2]?.messageId).toBe(String(topic.message.message_id));
    });

    it('a second poller ends the held one with 409 Conflict (retryable: polling again takes over)', async () => {
      const other = telegramChannel({ token: TOKEN }, { baseUrl: fake.baseUrl });
      const held = telegram.poll(null, { timeoutSeconds: 20 });
      await until(() => fake.polling());

      const taking = other.poll(null, { timeoutSeconds: 20 });
      const error = await rejection(held, ChannelError);
      expect(error).toMatchObject({
        channel: 'telegram',
        reason: 'conflict',
        retryable: true,
        status: 409,
        code: '409',
      });
      expect(error.message).toBe(
        'Telegram getUpdates failed: 409 Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      );

      await until(() => fake.polling());
      const update = fake.pushMessage({ chatId: 1, text: 'to the survivor' });
      expect((await taking).messages.map((m) => m.externalId)).toEqual([String(update.update_id)]);
    });

    it('a 409 because a webhook is set is permanent', async () => {
      fake.failNextOn(
        'getUpdates',
        telegramFailure.error(
          409,
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
        ),
      );
      const error = await rejection(telegram.poll(null, { timeoutSeconds: 0 }), ChannelError);
      expect(error).toMatchObject({ reason: 'conflict', retryable: false });
    });

    it('stops a held poll when the caller aborts', async () => {
      const controller = new AbortController();
      const polling = telegram.poll(null, { timeoutSeconds: 20, signal: controller.signal });
      await until(() => fake.polling());
      controller.abort();
      const error = await rejection(polling, ChannelError);
      expect(error).toMatchObject({ reason: 'aborted', retryable: true });
      expect(error.message).toBe('Telegram getUpdates was cancelled');
      await until(() => !fake.polling());
    });

    it('answers a wrong token with a permanent 401 that does not quote the token', async () => {
      const wrong = telegramChannel({ token: '999:wrong-token-value' }, { baseUrl: fake.baseUrl });
      const error = await rejection(wrong.poll(null, { timeoutSeconds: 0 }), ChannelError);
      expect(error).toMatchObject({ reason: 'unauthorized', retryable: false, status: 401 });
      expect(error.message).toBe('Telegram getUpdates failed: 401 Unauthorized');
    });

    it('parses an update from a Telegram webhook the same way', () => {
      expect(
        parseTelegramUpdate({
          update_id: 5,
          message: {
            message_id: 3,
            from: { id: 1, is_bot: false, first_name: 'A' },
            chat: { id: 1, type: 'private' },
            date: 1_700_000_000,
            text: 'hi',
          },
        }),
      ).toEqual({
        kind: 'message',
        message: {
          chatId: '1',
          user: 'A',
          text: 'hi',
          externalId: '5',
          fromBot: false,
          threadId: null,
          messageId: '3',
          receivedAt: '2023-11-14T22:13:20.000Z',
        },
      });
      expect(parseTelegramUpdate({ message: {} })).toEqual({
        kind: 'ignored',
        reason: 'not an update (no update_id)',
      });
      expect(parseTelegramUpdate({ update_id: 6, my_chat_member: {} })).toEqual({
        kind: 'ignored',
        reason: 'update kind my_chat_member',
      });
    });
  });

  describe('the bot (getMe)', () => {
    it('asks getMe once and caches it', async () => {
      const [a, b] = await Promise.all([telegram.me(), telegram.me()]);
      expect(a).toEqual({ id: String(fake.bot.id), username: 'mindledger_bot', name: 'Mindledger' });
      expect(b).toEqual(a);
      expect(fake.requests().map((r) => r.method)).toEqual(['getme']);
    });
  });

  describe('delivery: sendMessage', () => {
    it('sends chat_id, text and the message replied to; returns chat:message_id', async () => {
      const delivery = await telegram.deliver(outbound({ inReplyTo: '17' }));

      expect(fake.requests()[0]?.params).toEqual({
        chat_id: '4242',
        text: 'There are 42 orders.',
        reply_parameters: { message_id: 17, allow_sending_without_reply: true },
      });
      expect(fake.sent()).toEqual([
        {
          chat_id: '4242',
          text: 'There are 42 orders.',
          reply_to_message_id: 17,
          message_thread_id: null,
          message_id: 1,
        },
      ]);
      expect(delivery).toEqual({ externalId: '4242:1' });
    });

    it('answers in the forum topic, and sends no reply when there is nothing to reply to', async () => {
      await telegram.deliver(outbound({ chatId: '-100123', threadId: '77' }));
      expect(fake.requests()[0]?.params).toEqual({
        chat_id: '-100123',
        text: 'There are 42 orders.',
        message_thread_id: 77,
      });
    });

    it('maps 429 with retry_after to retryable, with the delay', async () => {
      fake.failNextSend(telegramFailure.tooManyRequests(3));
      const error = await rejection(telegram.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({
        reason: 'rate_limited',
        retryable: true,
        status: 429,
        retryAfterMs: 3000,
      });
      expect(error.message).toBe('Telegram sendMessage failed: 429 Too Many Requests: retry after 3');
      expect(fake.sent()).toEqual([]);
    });

    it('maps 5xx (JSON or an HTML page) to retryable', async () => {
      fake.failNextSend(telegramFailure.serverError(500), telegramFailure.badGateway());
      const json = await rejection(telegram.deliver(outbound()), ChannelError);
      const page = await rejection(telegram.deliver(outbound()), ChannelError);
      expect([json.reason, json.retryable, json.status]).toEqual(['unavailable', true, 500]);
      expect([page.reason, page.retryable, page.status]).toEqual(['unavailable', true, 502]);
      expect(page.message).toMatch(/^Telegram sendMessage failed: HTTP 502: <html>/);
    });

    it('maps other 4xx to permanent: blocked by the user, chat not found', async () => {
      fake.failNextSend(telegramFailure.blocked());
      const blocked = await rejection(telegram.deliver(outbound()), ChannelError);
      expect(blocked).toMatchObject({ reason: 'rejected', retryable: false, status: 403 });
      expect(blocked.message).toBe('Telegram sendMessage failed: 403 Forbidden: bot was blocked by the user');

      const strict = await startFakeTelegram({ token: TOKEN, knownChatsOnly: true });
      try {
        const channel = telegramChannel({ token: TOKEN }, { baseUrl: strict.baseUrl });
        const notFound = await rejection(channel.deliver(outbound({ chatId: '31337' })), ChannelError);
        expect(notFound).toMatchObject({ reason: 'rejected', retryable: false, status: 400 });
        expect(notFound.message).toBe('Telegram sendMessage failed: 400 Bad Request: chat not found');
      } finally {
        await strict.close();
      }
    });

    it('sends a text over 4096 characters in parts, in order, replying with the first', async () => {
      const paragraph = `${'word '.repeat(300).trim()}\n`;
      const text = paragraph.repeat(10).trim();
      expect(text.length).toBeGreaterThan(4096 * 3);

      const delivery = await telegram.deliver(outbound({ text, inReplyTo: '5' }));

      const sent = fake.sent();
      // Cut at line breaks: two 1,500-character paragraphs per part.
      expect(sent.map((s) => s.text.length)).toEqual([2999, 2999, 2999, 2999, 2999]);
      expect(sent.map((s) => s.reply_to_message_id)).toEqual([5, null, null, null, null]);
      expect(sent.map((s) => s.text).join('\n')).toBe(text);
      expect(delivery).toEqual({ externalId: `4242:${sent[0]!.message_id}` });
    });

    it('says how many parts were sent when a later part fails', async () => {
      const text = 'x'.repeat(5000);
      let calls = 0;
      const flaky = telegramChannel(
        { token: TOKEN },
        {
          baseUrl: fake.baseUrl,
          fetch: async (input, init) => {
            if (++calls === 2) fake.failNextSend(telegramFailure.serverError(500));
            return fetch(input, init);
          },
        },
      );
      const error = await rejection(flaky.deliver(outbound({ text })), ChannelError);
      expect(error).toMatchObject({ reason: 'unavailable', retryable: true });
      expect(error.message).toBe(
        'Telegram sendMessage failed: 500 Internal Server Error (after 1 of 2 parts were sent)',
      );
      expect(fake.sent().map((s) => s.text.length)).toEqual([4096]);
    });

    it('maps an unreachable API to a retryable network error that names the host, not the token path', async () => {
      const port = await closedPort();
      const down = telegramChannel({ token: TOKEN }, { baseUrl: `http://127.0.0.1:${port}` });
      const error = await rejection(down.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({ reason: 'network', retryable: true });
      expect(error.message).toBe(
        `Telegram sendMessage failed: could not reach http://127.0.0.1:${port} (ECONNREFUSED)`,
      );
      expect(error.message).not.toContain('AAF');
    });

    it('gives up on a silent API after timeoutMs, as retryable', async () => {
      const quick = telegramChannel({ token: TOKEN }, { baseUrl: fake.baseUrl, timeoutMs: 150 });
      fake.failNextSend(telegramFailure.hang());
      const error = await rejection(quick.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    });
  });
});
