/**
 * Chatbots on real channels: Slack (Events API in, chat.postMessage out), Telegram (getUpdates long
 * polling in, sendMessage out) and the generic webhook (signed in, signed out with retries), each
 * platform a local server speaking its real HTTP protocol, the service listening on a real socket.
 * The channels do not depend on the log's store (the exactly-once specs run both), so SQLite only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookSignature } from '../../src/channels';
import { startReceiver } from '../channels/receiver';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { startFakeSlack, type FakeSlack } from '../support/fakeSlack';
import { startFakeTelegram, type FakeTelegram } from '../support/fakeTelegram';
import { problemOf, querySql, startTestApp, type TestApp } from '../support/app';
import { eventsOf, givenDatabase, givenProject, uniqueName } from '../support/world';

const SLACK_TOKEN = 'xoxb-fake-token';
const SLACK_SECRET = 'slack-signing-secret';
const TELEGRAM_TOKEN = '123456:fake-telegram-token';

const eventually = async <T>(probe: () => Promise<T | undefined> | T | undefined, what: string) => {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
};

describe('chatbots on Slack, Telegram and webhooks', () => {
  let t: TestApp;
  let llm: FakeOpenAi;
  let slack: FakeSlack;
  let telegram: FakeTelegram;
  let server: http.Server;
  let origin: string;

  beforeAll(async () => {
    llm = await startFakeOpenAi();
    slack = await startFakeSlack({
      token: SLACK_TOKEN,
      botUserId: 'U0BOT',
      signingSecret: SLACK_SECRET,
    });
    telegram = await startFakeTelegram({ token: TELEGRAM_TOKEN });
    t = await startTestApp('sqlite', {
      CHATBOT_POLL_MS: '50',
      CHATBOT_RETRY_BASE_MS: '50',
      CHATBOT_RETRY_MAX_MS: '100',
      CHATBOT_MAX_DELIVERIES: '3',
      CHATBOT_TELEGRAM_POLL_SECONDS: '1',
      SLACK_API_BASE_URL: slack.baseUrl,
      TELEGRAM_API_BASE_URL: telegram.baseUrl,
    });
    server = http.createServer(t.running.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.dispose();
    await Promise.all([llm.close(), slack.close(), telegram.close()]);
  });
  beforeEach(() => {
    llm.reset();
    slack.reset();
    telegram.reset();
    llm.setFallback((req) => fakeReply.text(`answer to ${lastUserText(req)}`));
  });

  /** A project, an agent on the fake LLM, a channel connection and a running chatbot on it. */
  const givenBotOn = async (engine: string, parameters: Record<string, unknown>) => {
    const { name: project } = await givenProject(t);
    const agent = uniqueName('agent');
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: agent,
          model: { provider: 'openai', model_name: 'gpt-test', api_key: 'sk-chan', base_url: llm.baseUrl },
        },
      })
      .expect(201);
    const database = await givenDatabase(t, { engine, parameters });
    const name = uniqueName('bot');
    const created = await t.http
      .post(`/api/projects/${project}/chatbots`)
      .send({ chatbot: { name, agent_name: agent, database_name: database.name, is_running: true } })
      .expect(201);
    const body = created.body as { id: number; webhook_token: string };
    return {
      project,
      name,
      id: body.id,
      base: `/api/projects/${project}/chatbots/${name}`,
      hook: `${origin}/api/webhooks/chatbots/${body.webhook_token}`,
    };
  };

  const conversationOf = async (base: string) =>
    (await t.http.get(`${base}/messages`).expect(200)).body as {
      role: string;
      text: string;
      message_id: string;
    }[];

  const messageStreams = async (bot: { name: string }) =>
    (
      await querySql(
        t,
        `SELECT MESSAGE_ID, STATUS FROM information_schema.CHAT_MESSAGES WHERE CHATBOT = '${bot.name}' ORDER BY MESSAGE_ID`,
      )
    ).data as [string, string][];

  describe('Slack', () => {
    const slackBot = () => givenBotOn('slack', { token: SLACK_TOKEN, signing_secret: SLACK_SECRET });

    it("answers Slack's URL check with its challenge", async () => {
      const bot = await slackBot();
      const sent = await slack.sendUrlVerification(bot.hook);
      expect(sent.status).toBe(200);
      expect(sent.json).toEqual({ challenge: sent.challenge });
    });

    it('answers a message with chat.postMessage in its channel and thread, once, though Slack redelivers the event', async () => {
      const bot = await slackBot();
      const event = {
        type: 'message' as const,
        channel: 'C0GENERAL',
        user: 'U0ANN',
        text: 'how many rentals?',
        ts: '1700000000.000100',
        thread_ts: '1700000000.000001',
      };
      const first = await slack.sendEvent(bot.hook, event, { eventId: 'Ev0001' });
      expect(first.status).toBe(200);
      expect(first.json).toMatchObject({ ok: true, duplicate: false });
      const again = await slack.sendEvent(bot.hook, event, {
        eventId: 'Ev0001',
        retryNum: 1,
        retryReason: 'http_timeout',
      });
      expect(again.json).toMatchObject({ ok: true, duplicate: true });

      const posted = await eventually(
        () => (slack.posted().length > 0 ? slack.posted() : undefined),
        'an answer posted to Slack',
      );
      expect(posted).toEqual([
        expect.objectContaining({
          channel: 'C0GENERAL',
          text: 'answer to how many rentals?',
          thread_ts: '1700000000.000001',
        }),
      ]);
      const postCall = slack.requests().find((r) => r.method === 'chat.postMessage');
      expect(postCall?.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);

      const messageId = (first.json as { message_id: string }).message_id;
      const events = await eventually(async () => {
        const e = await eventsOf(t, `chat-${bot.id}-${messageId}`);
        return e.some((x) => x.type === 'ChatAnswerDelivered') ? e : undefined;
      }, 'the delivery recorded');
      expect(events.map((e) => e.type)).toEqual([
        'ChatMessageReceived',
        'ChatAnswerClaimed',
        'ChatAnswered',
        'ChatAnswerDelivered',
      ]);
      expect(events[0]!.data).toMatchObject({
        channel: 'slack',
        chatId: 'C0GENERAL',
        user: 'U0ANN',
        text: 'how many rentals?',
        threadId: '1700000000.000001',
      });
      // Slack's id of the posted answer is kept with the delivery.
      expect(events[3]!.data).toMatchObject({ externalId: `C0GENERAL:${posted[0]!.ts}` });
      expect(llm.chatRequests()).toHaveLength(1);
    });

    it('ignores its own posts and other bots, so it never answers itself', async () => {
      const bot = await slackBot();
      const own = await slack.sendEvent(bot.hook, {
        type: 'message',
        channel: 'C0GENERAL',
        user: 'U0BOT',
        text: 'answer to something',
        ts: '1700000001.000100',
      });
      const other = await slack.sendEvent(bot.hook, {
        type: 'message',
        subtype: 'bot_message',
        bot_id: 'B0OTHER',
        channel: 'C0GENERAL',
        text: 'beep',
        ts: '1700000001.000200',
      });
      for (const sent of [own, other]) {
        expect(sent.status).toBe(200);
        expect(sent.json).toMatchObject({ ok: true, ignored: expect.any(String) });
      }
      expect(await messageStreams(bot)).toEqual([]);
    });

    it('refuses a request whose signature does not match (401) and records nothing', async () => {
      const bot = await slackBot();
      const event = { type: 'message', channel: 'C1', user: 'U0ANN', text: 'forged', ts: '1.2' };
      const forged = await slack.sendEvent(bot.hook, event, { signWith: 'not-the-secret' });
      const unsigned = await slack.sendEvent(bot.hook, event, { unsigned: true });
      const tampered = await slack.sendEvent(bot.hook, event, {
        tamper: (body) => body.replace('forged', 'tampered'),
      });
      const stale = await slack.sendEvent(bot.hook, event, {
        timestamp: Math.floor(Date.now() / 1000) - 3600,
      });
      for (const sent of [forged, unsigned, tampered, stale]) {
        expect(sent.status).toBe(401);
        expect(sent.headers['content-type']).toMatch(/application\/problem\+json/);
        expect((sent.json as { detail: string }).detail).toMatch(/signature/i);
      }
      expect(await messageStreams(bot)).toEqual([]);
    });

    it('retries a rate-limited post after Retry-After and records the failed try', async () => {
      const bot = await slackBot();
      slack.failNext({ type: 'error', error: 'ratelimited', status: 429, retryAfterSeconds: 1 });
      const sent = await slack.sendEvent(bot.hook, {
        type: 'message',
        channel: 'C0GENERAL',
        user: 'U0ANN',
        text: 'busy?',
        ts: '1700000002.000100',
      });
      const messageId = (sent.json as { message_id: string }).message_id;
      const events = await eventually(async () => {
        const e = await eventsOf(t, `chat-${bot.id}-${messageId}`);
        return e.some((x) => x.type === 'ChatAnswerDelivered') ? e : undefined;
      }, 'delivered after the rate limit');
      const failed = events.filter((e) => e.type === 'ChatDeliveryFailed');
      expect(failed).toHaveLength(1);
      expect(JSON.stringify(failed[0]!.data)).toMatch(/ratelimited|rate/i);
      expect(JSON.stringify(failed[0]!.data)).not.toContain(SLACK_TOKEN);
      expect(slack.posted().map((p) => p.text)).toEqual(['answer to busy?']);
    });

    it('gives up on a permanent refusal (channel_not_found) at once and says why in last_error', async () => {
      const bot = await slackBot();
      slack.failNext({ type: 'error', error: 'channel_not_found' });
      await slack.sendEvent(bot.hook, {
        type: 'message',
        channel: 'C0GONE',
        user: 'U0ANN',
        text: 'hello?',
        ts: '1700000003.000100',
      });
      const lastError = await eventually(async () => {
        const row = (await t.http.get(bot.base).expect(200)).body as { last_error: string | null };
        return row.last_error ?? undefined;
      }, 'last_error set');
      expect(lastError).toMatch(/channel_not_found/);
      expect(lastError).not.toContain(SLACK_TOKEN);
      const failures = (
        await querySql(
          t,
          `SELECT COUNT(*) FROM information_schema.CHAT_MESSAGES WHERE CHATBOT = '${bot.name}' AND STATUS = 'given_up'`,
        )
      ).data;
      expect(failures).toEqual([[1]]);
      expect(slack.requests().filter((r) => r.method === 'chat.postMessage')).toHaveLength(1);
    });
  });

  describe('Telegram', () => {
    it('long-polls getUpdates and replies with sendMessage to the message, confirming the update', async () => {
      const bot = await givenBotOn('telegram', { token: TELEGRAM_TOKEN });
      const update = telegram.pushMessage({ chatId: 4242, text: 'status?' });
      const sent = await eventually(
        () => (telegram.sent().length > 0 ? telegram.sent() : undefined),
        'a Telegram reply',
      );
      expect(sent).toEqual([
        expect.objectContaining({
          chat_id: '4242',
          text: 'answer to status?',
          reply_to_message_id: update.message.message_id,
        }),
      ]);
      // Confirmed by the next poll's offset, so Telegram will not hand it out again.
      await eventually(() => (telegram.pending().length === 0 ? true : undefined), 'update confirmed');
      const conversation = await conversationOf(bot.base);
      expect(conversation.map((m) => [m.role, m.text])).toEqual([
        ['user', 'status?'],
        ['assistant', 'answer to status?'],
      ]);
      const received = (await eventsOf(t, `chat-${bot.id}-${conversation[0]!.message_id}`))[0]!;
      expect(received.data).toMatchObject({
        channel: 'telegram',
        chatId: '4242',
        user: 'alice',
        externalId: String(update.update_id),
      });
      // Its token is in the URL of every call; it never shows in what the service returns.
      const db = await querySql(t, `SELECT * FROM information_schema.DATABASES`);
      expect(JSON.stringify(db)).not.toContain('fake-telegram-token');

      // A stopped bot stops polling: what arrives meanwhile stays with Telegram until it starts again.
      await t.http
        .put(bot.base)
        .send({ chatbot: { is_running: false } })
        .expect(200);
      await new Promise((r) => setTimeout(r, 1500));
      telegram.pushMessage({ chatId: 4242, text: 'while stopped' });
      await new Promise((r) => setTimeout(r, 1500));
      expect(telegram.pending()).toHaveLength(1);
      await t.http
        .put(bot.base)
        .send({ chatbot: { is_running: true } })
        .expect(200);
      await eventually(
        () => (telegram.sent().some((s) => s.text === 'answer to while stopped') ? true : undefined),
        'the held message answered after restart',
      );
    });

    it('says in last_error that Telegram refuses its token (once, not per poll), without the token', async () => {
      const bot = await givenBotOn('telegram', { token: '999:revoked-token' });
      const lastError = await eventually(async () => {
        const row = (await t.http.get(bot.base).expect(200)).body as { last_error: string | null };
        return row.last_error ?? undefined;
      }, 'last_error set');
      expect(lastError).toMatch(/telegram channel is failing: .*Unauthorized/i);
      expect(lastError).not.toContain('revoked-token');
      await new Promise((r) => setTimeout(r, 500));
      const health = await eventsOf(t, `chatchannel-${bot.id}-telegram`);
      expect(health.map((e) => e.type)).toEqual(['ChatChannelFailed']);
      // Stopped, it stops polling (and the failure stays shown until the channel works).
      await t.http
        .put(bot.base)
        .send({ chatbot: { is_running: false } })
        .expect(200);
    });
  });

  describe('webhook', () => {
    const WEBHOOK_SECRET = 'whsec-test';

    const signed = (body: object, secret = WEBHOOK_SECRET) => {
      const raw = JSON.stringify(body);
      const timestamp = String(Math.floor(Date.now() / 1000));
      return {
        raw,
        headers: {
          'content-type': 'application/json',
          'x-mindledger-timestamp': timestamp,
          'x-mindledger-signature': webhookSignature(secret, timestamp, raw),
        },
      };
    };

    const post = (url: string, request: { raw: string; headers: Record<string, string> }) =>
      fetch(url, { method: 'POST', headers: request.headers, body: request.raw });

    it('takes a signed message in and delivers the answer signed, with an Idempotency-Key, retrying 5xx', async () => {
      let calls = 0;
      const receiver = await startReceiver(() => (++calls <= 2 ? { status: 503 } : { status: 200 }));
      try {
        const bot = await givenBotOn('webhook', { url: receiver.url(), secret: WEBHOOK_SECRET });
        const res = await post(
          bot.hook,
          signed({ chat_id: 'room-1', user: 'ann', text: 'ping', message_id: 'm-1' }),
        );
        expect(res.status).toBe(200);
        const body = (await res.json()) as { message_id: string; duplicate: boolean };
        expect(body.duplicate).toBe(false);

        const events = await eventually(async () => {
          const e = await eventsOf(t, `chat-${bot.id}-${body.message_id}`);
          return e.some((x) => x.type === 'ChatAnswerDelivered') ? e : undefined;
        }, 'delivered after two 503s');
        expect(events.filter((e) => e.type === 'ChatDeliveryFailed')).toHaveLength(2);
        const answered = events.find((e) => e.type === 'ChatAnswered')!.data as { answerId: string };

        expect(receiver.received()).toHaveLength(3);
        for (const request of receiver.received()) {
          expect(request.headers['idempotency-key']).toBe(answered.answerId);
          const expected = webhookSignature(
            WEBHOOK_SECRET,
            String(request.headers['x-mindledger-timestamp']),
            request.raw,
          );
          expect(request.headers['x-mindledger-signature']).toBe(expected);
          expect(JSON.parse(request.raw.toString('utf8'))).toEqual({
            chat_id: 'room-1',
            text: 'answer to ping',
            answer_id: answered.answerId,
            in_reply_to: 'm-1',
            thread_id: null,
          });
        }
      } finally {
        await receiver.close();
      }
    });

    it('refuses an unsigned or wrongly signed message (401) and a body without text (400)', async () => {
      const receiver = await startReceiver();
      try {
        const bot = await givenBotOn('webhook', { url: receiver.url(), secret: WEBHOOK_SECRET });
        const message = { chat_id: 'room', text: 'hi' };
        const unsigned = await fetch(bot.hook, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(message),
        });
        const wrong = await post(bot.hook, signed(message, 'another-secret'));
        for (const res of [unsigned, wrong]) {
          expect(res.status).toBe(401);
          expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
          expect(((await res.json()) as { detail: string }).detail).toMatch(/signature/i);
        }
        const noText = await post(bot.hook, signed({ chat_id: 'room' }));
        expect(noText.status).toBe(400);
        expect(((await noText.json()) as { detail: string }).detail).toMatch(/text/);
        expect(await messageStreams(bot)).toEqual([]);
        expect(receiver.received()).toHaveLength(0);
      } finally {
        await receiver.close();
      }
    });

    it('gives up on a permanent 4xx after one try and keeps the receiver quiet afterwards', async () => {
      const receiver = await startReceiver(() => ({ status: 410, body: 'gone' }));
      try {
        const bot = await givenBotOn('webhook', { url: receiver.url() });
        const res = await t.http
          .post(new URL(bot.hook).pathname)
          .send({ chat_id: 'r', text: 'anyone?' })
          .expect(200);
        const messageId = (res.body as { message_id: string }).message_id;
        const events = await eventually(async () => {
          const e = await eventsOf(t, `chat-${bot.id}-${messageId}`);
          return e.some((x) => x.type === 'ChatDeliveryFailed') ? e : undefined;
        }, 'the delivery failure recorded');
        const failed = events.find((e) => e.type === 'ChatDeliveryFailed')!.data as {
          retryAt: string | null;
          error: string;
        };
        expect(failed.retryAt).toBeNull();
        expect(failed.error).toMatch(/410/);
        await new Promise((r) => setTimeout(r, 500));
        expect(receiver.received()).toHaveLength(1);
        const row = (await t.http.get(bot.base).expect(200)).body as { last_error: string };
        expect(row.last_error).toMatch(/410/);
      } finally {
        await receiver.close();
      }
    });

    it('answers unknown webhook tokens with 404', async () => {
      const res = await t.http.post('/api/webhooks/chatbots/no-such-token').send({ chat_id: 'x', text: 'y' });
      expect(res.status).toBe(404);
      expect(problemOf(res).detail).toMatch(/webhook token/);
    });
  });
});
