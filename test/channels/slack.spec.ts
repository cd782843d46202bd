import { ChannelError, slackChannel, type InboundMessage, type SlackChannel } from '../../src/channels';
import { slackFailure, startFakeSlack, type FakeSlack } from '../support/fakeSlack';
import { closedPort, rejection, startReceiver, type Receiver } from './receiver';

const TOKEN = 'xoxb-1111-2222-SecretBotToken';
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const BOT_USER = 'U0BOT';

const outbound = (fields: Partial<{ chatId: string; text: string; threadId: string | null }> = {}) => ({
  chatId: 'C0GENERAL',
  text: 'There are 42 orders.',
  answerId: 'answer-1',
  inReplyTo: null,
  ...fields,
});

describe('Slack channel against a fake Slack on a real socket', () => {
  let fake: FakeSlack;
  let slack: SlackChannel;
  /** Our side of the Events API, as the chatbot route would be: verify, then parse. */
  let route: Receiver;
  let inbound: { message: InboundMessage; eventId: string | null }[];

  beforeAll(async () => {
    fake = await startFakeSlack({ token: TOKEN, botUserId: BOT_USER, signingSecret: SECRET });
    route = await startReceiver();
  });
  beforeEach(() => {
    slack = slackChannel(
      { token: TOKEN, signing_secret: SECRET },
      { baseUrl: fake.baseUrl, timeoutMs: 2000 },
    );
    inbound = [];
    route.handle((request) => {
      const check = slack.verify(request.headers, request.raw);
      if (!check.ok) return { status: 401, body: check.reason };
      const parsed = slack.parse(JSON.parse(request.raw.toString('utf8')));
      switch (parsed.kind) {
        case 'challenge':
          return { status: 200, headers: { 'content-type': 'text/plain' }, body: parsed.challenge };
        case 'message':
          inbound.push({ message: parsed.message, eventId: parsed.eventId });
          return { status: 200 };
        case 'ignored':
          return { status: 200, body: `ignored: ${parsed.reason}` };
        case 'invalid':
          return { status: 400, body: parsed.reason };
      }
    });
  });
  afterEach(() => {
    fake.reset();
    route.reset();
  });
  afterAll(async () => {
    await fake.close();
    await route.close();
  });

  describe('inbound: the Events API', () => {
    it('answers the url_verification handshake with its challenge', async () => {
      const answer = await fake.sendUrlVerification(route.url('/slack'));

      expect(answer.status).toBe(200);
      expect(answer.text).toBe(answer.challenge);
      expect(answer.challenge.length).toBeGreaterThan(10);
    });

    it('accepts a signed message event and reads channel, user, text, ts and the dedupe key', async () => {
      const event = fake.userMessage({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'how many orders?' });

      const answer = await fake.sendEvent(route.url('/slack'), event);

      expect(answer.status).toBe(200);
      expect(inbound).toEqual([
        {
          eventId: answer.eventId,
          message: {
            chatId: 'C0GENERAL',
            user: 'U0ALICE',
            text: 'how many orders?',
            externalId: `C0GENERAL:${event.ts}`,
            fromBot: false,
            threadId: null,
            messageId: event.ts,
            receivedAt: new Date(Math.floor(Number(event.ts) * 1000)).toISOString(),
          },
        },
      ]);
      const sent = route.received()[0]!;
      expect(sent.headers['x-slack-signature']).toMatch(/^v0=[0-9a-f]{64}$/);
      expect(sent.headers['x-slack-request-timestamp']).toMatch(/^\d{10}$/);
    });

    it('refuses a wrong secret, a tampered body, missing headers and stale or future timestamps', async () => {
      const event = () => fake.userMessage({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi' });
      const now = Math.floor(Date.now() / 1000);
      const cases = [
        { opts: { signWith: 'not-the-secret' }, reason: /does not match/ },
        { opts: { tamper: (b: string) => b.replace('"hi"', '"rm -rf"') }, reason: /does not match/ },
        { opts: { unsigned: true }, reason: /X-Slack-Request-Timestamp header is missing/ },
        { opts: { signature: '' }, reason: /X-Slack-Signature header is missing/ },
        { opts: { timestamp: now - 6 * 60 }, reason: /more than 300 s/ },
        { opts: { timestamp: now + 6 * 60 }, reason: /more than 300 s/ },
      ];
      for (const { opts, reason } of cases) {
        const answer = await fake.sendEvent(route.url('/slack'), event(), opts);
        expect({ status: answer.status, reason: answer.text }).toEqual({
          status: 401,
          reason: expect.stringMatching(reason),
        });
      }
      expect(inbound).toEqual([]);
    });

    it('checks the timestamp window against the given clock: 300 s is fresh, 301 s is stale', () => {
      const body = Buffer.from(
        JSON.stringify(fake.envelope(fake.userMessage({ channel: 'C1', user: 'U1', text: 'x' }))),
      );
      const ts = 1_700_000_000;
      const headers = {
        'X-Slack-Request-Timestamp': String(ts),
        'X-Slack-Signature': fake.sign(body.toString(), ts),
      };

      expect(slack.verify(headers, body, ts + 300)).toEqual({ ok: true, skipped: false });
      expect(slack.verify(headers, body, ts - 300)).toEqual({ ok: true, skipped: false });
      expect(slack.verify(headers, body, ts + 301)).toMatchObject({ ok: false });
      expect(slack.verify(new Headers(headers), body.toString(), ts)).toEqual({ ok: true, skipped: false });
      expect(slack.verify({ ...headers, 'X-Slack-Request-Timestamp': 'yesterday' }, body, ts)).toEqual({
        ok: false,
        reason: 'the X-Slack-Request-Timestamp header is not a Unix timestamp',
      });
    });

    it('skips verification when no signing secret is configured (and says so)', () => {
      const open = slackChannel({ token: TOKEN }, { baseUrl: fake.baseUrl });
      expect(open.verify({}, Buffer.from('{}'))).toEqual({ ok: true, skipped: true });
      expect(slackChannel({ token: TOKEN, signing_secret: '' }).verify({}, '{}')).toEqual({
        ok: true,
        skipped: true,
      });
    });

    it('flags bot messages: bot_id, the bot_message subtype, and the bot user itself', async () => {
      const human = fake.userMessage({ channel: 'C1', user: 'U0ALICE', text: 'human' });
      await fake.sendEvent(route.url(), human);
      await fake.sendEvent(route.url(), {
        ...fake.userMessage({ channel: 'C1', user: 'U0OTHER', text: 'from an app' }),
        bot_id: 'B0OTHER',
      });
      await fake.sendEvent(route.url(), {
        type: 'message',
        subtype: 'bot_message',
        channel: 'C1',
        bot_id: 'B0LEGACY',
        username: 'legacy-bot',
        text: 'integration post',
        ts: '1700000000.000001',
      });
      // The bot's own user id, learnt from the payload's bot authorization.
      await fake.sendEvent(
        route.url(),
        fake.userMessage({ channel: 'C1', user: BOT_USER, text: 'my own answer' }),
      );

      expect(inbound.map((i) => [i.message.text, i.message.user, i.message.fromBot])).toEqual([
        ['human', 'U0ALICE', false],
        ['from an app', 'U0OTHER', true],
        ['integration post', 'legacy-bot', true],
        ['my own answer', BOT_USER, true],
      ]);
    });

    it('knows the bot user from auth.test or the caller even without an authorization in the payload', async () => {
      const event = fake.userMessage({ channel: 'C1', user: BOT_USER, text: 'mine' });
      const bare = { type: 'event_callback', event_id: 'Ev1', event };

      expect(slack.parse(bare)).toMatchObject({ kind: 'message', message: { fromBot: false } });
      expect(slack.parse(bare, { botUserId: BOT_USER })).toMatchObject({
        kind: 'message',
        message: { fromBot: true },
      });
      await slack.botUserId();
      expect(slack.parse(bare)).toMatchObject({ kind: 'message', message: { fromBot: true } });
    });

    it('strips the leading mention of the bot and keeps one dedupe key for message, app_mention and retries', async () => {
      const event = fake.userMessage({
        channel: 'C1',
        user: 'U0ALICE',
        text: `<@${BOT_USER}> how many orders?`,
      });

      await fake.sendEvent(route.url(), event);
      await fake.sendEvent(route.url(), { ...event, type: 'app_mention' });
      await fake.sendEvent(route.url(), event, { retryNum: 1, retryReason: 'http_timeout' });

      expect(inbound.map((i) => i.message.text)).toEqual(Array(3).fill('how many orders?'));
      expect(new Set(inbound.map((i) => i.message.externalId))).toEqual(new Set([`C1:${event.ts}`]));
      expect(new Set(inbound.map((i) => i.eventId)).size).toBe(3);
      expect(route.received()[2]!.headers['x-slack-retry-num']).toBe('1');
    });

    it('reads a thread reply: threadId is the parent ts', async () => {
      const parent = fake.userMessage({ channel: 'C1', user: 'U0ALICE', text: 'first' });
      const reply = fake.userMessage({
        channel: 'C1',
        user: 'U0ALICE',
        text: 'and then?',
        threadTs: parent.ts,
      });

      await fake.sendEvent(route.url(), reply);

      expect(inbound[0]!.message).toMatchObject({
        threadId: parent.ts,
        messageId: reply.ts,
        externalId: `C1:${reply.ts}`,
      });
    });

    it('ignores edits, deletions, joins, other events and empty texts; refuses what is not Slack', async () => {
      const answers = [];
      for (const event of [
        {
          type: 'message',
          subtype: 'message_changed',
          channel: 'C1',
          ts: '1.1',
          message: { text: 'edited' },
        },
        { type: 'message', subtype: 'message_deleted', channel: 'C1', ts: '1.2', deleted_ts: '1.1' },
        {
          type: 'message',
          subtype: 'channel_join',
          channel: 'C1',
          user: 'U2',
          text: '<@U2> has joined',
          ts: '1.3',
        },
        { type: 'reaction_added', user: 'U2', reaction: 'thumbsup', item: { channel: 'C1', ts: '1.1' } },
        { type: 'message', channel: 'C1', user: 'U2', text: `<@${BOT_USER}>`, ts: '1.4' },
      ])
        answers.push((await fake.sendEvent(route.url(), event)).text);

      expect(answers).toEqual([
        'ignored: message subtype message_changed',
        'ignored: message subtype message_deleted',
        'ignored: message subtype channel_join',
        'ignored: event type reaction_added',
        'ignored: message without text',
      ]);
      expect(inbound).toEqual([]);
      expect(slack.parse({ type: 'app_rate_limited', minute_rate_limited: 1 })).toEqual({
        kind: 'ignored',
        reason: 'payload type app_rate_limited',
      });
      expect(slack.parse('hello')).toEqual({ kind: 'invalid', reason: 'not a Slack Events API payload' });
      expect(slack.parse({ type: 'url_verification' })).toMatchObject({ kind: 'invalid' });
      expect(
        slack.parse({ type: 'event_callback', event: { type: 'message', text: 'no channel' } }),
      ).toMatchObject({
        kind: 'invalid',
      });
    });
  });

  describe('the bot user (auth.test)', () => {
    it('asks auth.test once, with the Bearer token, and caches the answer', async () => {
      const [a, b] = await Promise.all([slack.botUserId(), slack.botUserId()]);
      const c = await slack.botUserId();

      expect([a, b, c]).toEqual([BOT_USER, BOT_USER, BOT_USER]);
      expect(fake.requests().map((r) => [r.method, r.headers.authorization])).toEqual([
        ['auth.test', `Bearer ${TOKEN}`],
      ]);
    });

    it('does not cache a failure, and never quotes the token', async () => {
      const wrong = slackChannel({ token: 'xoxb-wrong-token-123' }, { baseUrl: fake.baseUrl });
      const error = await rejection(wrong.botUserId(), ChannelError);
      expect(error).toMatchObject({
        channel: 'slack',
        reason: 'unauthorized',
        retryable: false,
        code: 'invalid_auth',
      });
      expect(error.message).toBe('Slack auth.test failed: invalid_auth');

      fake.failNextOn('auth.test', slackFailure.serverError(503));
      await rejection(slack.botUserId(), ChannelError);
      expect(await slack.botUserId()).toBe(BOT_USER);
      expect(fake.requests().filter((r) => r.method === 'auth.test')).toHaveLength(3);
    });
  });

  describe('delivery: chat.postMessage', () => {
    it('posts JSON with the Bearer token, in the thread, and returns channel:ts', async () => {
      const delivery = await slack.deliver(outbound({ threadId: '1700000000.000100' }));

      const [request] = fake.requests();
      expect(request?.method).toBe('chat.postMessage');
      expect(request?.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(request?.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(request?.body).toEqual({
        channel: 'C0GENERAL',
        text: 'There are 42 orders.',
        thread_ts: '1700000000.000100',
      });
      const [posted] = fake.posted();
      expect(posted).toEqual({
        channel: 'C0GENERAL',
        text: 'There are 42 orders.',
        thread_ts: '1700000000.000100',
        ts: expect.any(String),
      });
      expect(delivery).toEqual({ externalId: `C0GENERAL:${posted!.ts}` });
    });

    it('posts to the channel itself when there is no thread', async () => {
      await slack.deliver(outbound());
      expect(fake.requests()[0]?.body).toEqual({ channel: 'C0GENERAL', text: 'There are 42 orders.' });
    });

    it('maps HTTP 429 with Retry-After to retryable, with the delay', async () => {
      fake.failNext(slackFailure.ratelimited(7));
      const error = await rejection(slack.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({
        channel: 'slack',
        reason: 'rate_limited',
        retryable: true,
        status: 429,
        retryAfterMs: 7000,
        code: 'ratelimited',
      });
      expect(error.message).toBe('Slack chat.postMessage failed: ratelimited (HTTP 429)');
      expect(fake.posted()).toEqual([]);
    });

    it('maps ok:false errors: rate limits and Slack failures retryable, the rest permanent', async () => {
      const cases: [string, string, boolean][] = [
        ['ratelimited', 'rate_limited', true],
        ['rate_limited', 'rate_limited', true],
        ['internal_error', 'unavailable', true],
        ['fatal_error', 'unavailable', true],
        ['service_unavailable', 'unavailable', true],
        ['channel_not_found', 'rejected', false],
        ['not_in_channel', 'rejected', false],
        ['is_archived', 'rejected', false],
        ['invalid_auth', 'unauthorized', false],
        ['token_revoked', 'unauthorized', false],
        ['missing_scope', 'unauthorized', false],
      ];
      const seen = [];
      for (const [code] of cases) {
        fake.failNext(slackFailure.error(code));
        const error = await rejection(slack.deliver(outbound()), ChannelError);
        seen.push([error.code, error.reason, error.retryable]);
        expect(error.status).toBe(200);
        expect(error.message).toBe(`Slack chat.postMessage failed: ${code}`);
      }
      expect(seen).toEqual(cases);
    });

    it('maps a 5xx page from Slack to retryable', async () => {
      fake.failNext(slackFailure.serverError(502));
      const error = await rejection(slack.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({ reason: 'unavailable', retryable: true, status: 502 });
      expect(error.message).toBe('Slack chat.postMessage failed: HTTP 502');
    });

    it('answers a wrong token with a permanent invalid_auth that does not quote the token', async () => {
      const wrong = slackChannel({ token: 'xoxb-leaked-if-quoted' }, { baseUrl: fake.baseUrl });
      const error = await rejection(wrong.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({ reason: 'unauthorized', retryable: false, code: 'invalid_auth' });
      expect(error.message).not.toContain('xoxb');
      expect(fake.posted()).toEqual([]);
    });

    it('reports an unknown channel from the real check, permanently', async () => {
      const strict = await startFakeSlack({
        token: TOKEN,
        botUserId: BOT_USER,
        signingSecret: SECRET,
        channels: ['C0GENERAL'],
      });
      try {
        const channel = slackChannel({ token: TOKEN }, { baseUrl: strict.baseUrl });
        await channel.deliver(outbound());
        const error = await rejection(channel.deliver(outbound({ chatId: 'C0NOWHERE' })), ChannelError);
        expect(error).toMatchObject({ reason: 'rejected', retryable: false, code: 'channel_not_found' });
        expect(strict.posted().map((p) => p.channel)).toEqual(['C0GENERAL']);
      } finally {
        await strict.close();
      }
    });

    it('maps an unreachable Slack to a retryable network error naming the host only', async () => {
      const port = await closedPort();
      const down = slackChannel({ token: TOKEN }, { baseUrl: `http://127.0.0.1:${port}/api` });
      const error = await rejection(down.deliver(outbound()), ChannelError);
      expect(error).toMatchObject({ reason: 'network', retryable: true });
      expect(error.message).toBe(
        `Slack chat.postMessage failed: could not reach http://127.0.0.1:${port} (ECONNREFUSED)`,
      );
    });

    it('gives up after timeoutMs (retryable: it may have been posted) and stops when the caller aborts', async () => {
      const quick = slackChannel({ token: TOKEN }, { baseUrl: fake.baseUrl, timeoutMs: 200 });
      fake.failNext(slackFailure.hang(), slackFailure.hang());
      const timeout = await rejection(quick.deliver(outbound()), ChannelError);
      expect(timeout).toMatchObject({ reason: 'timeout', retryable: true });
      // Its own 200 ms ended it (the fake hangs for ever): the message says which limit, not a clock.
      expect(timeout.message).toBe('Slack chat.postMessage failed: no answer within 200 ms');

      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const aborted = await rejection(slack.deliver(outbound(), controller.signal), ChannelError);
      expect(aborted).toMatchObject({ reason: 'aborted', retryable: true });
    });

    it('refuses an empty answer without calling Slack', async () => {
      const error = await rejection(slack.deliver(outbound({ text: '  ' })), ChannelError);
      expect(error).toMatchObject({ reason: 'rejected', retryable: false, code: 'no_text' });
      expect(fake.requests()).toEqual([]);
    });
  });
});
