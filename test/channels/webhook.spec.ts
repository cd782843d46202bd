import {
  ChannelError,
  verifyWebhookSignature,
  webhookChannel,
  webhookInbound,
  webhookInboundBody,
  webhookSignature,
} from '../../src/channels';
import { VERSION } from '../../src/shared/version';
import { closedPort, rejection, startReceiver, type Receiver } from './receiver';

const SECRET = 'whsec-0123456789-abcdef';
const NOW = 1_700_000_000;

const outbound = {
  chatId: 'c1',
  text: 'There are 42 orders.',
  answerId: 'ans-7',
  inReplyTo: 'm-3',
  threadId: null,
};

describe('webhook channel against a local receiver', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.reset());
  afterAll(() => receiver.close());

  const channel = (secret: string | null = SECRET, timeoutMs = 2000) =>
    webhookChannel(
      { url: receiver.url('/hooks/chat?key=abc'), secret },
      { timeoutMs, nowSeconds: () => NOW },
    );

  it('POSTs the answer as JSON, signed, with an Idempotency-Key; the receiver verifies it', async () => {
    receiver.handle(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message_id: 991 }),
    }));

    const delivery = await channel().deliver(outbound);

    const [request] = receiver.received();
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/hooks/chat?key=abc');
    expect(JSON.parse(request!.raw.toString('utf8'))).toEqual({
      chat_id: 'c1',
      text: 'There are 42 orders.',
      answer_id: 'ans-7',
      in_reply_to: 'm-3',
      thread_id: null,
    });
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      'idempotency-key': 'ans-7',
      'x-mindledger-timestamp': String(NOW),
      'user-agent': `mindledger/${VERSION}`,
    });
    expect(request?.headers['x-mindledger-signature']).toBe(webhookSignature(SECRET, NOW, request!.raw));
    expect(verifyWebhookSignature(SECRET, request!.headers, request!.raw, NOW + 10)).toEqual({
      ok: true,
      skipped: false,
    });
    expect(delivery).toEqual({ externalId: '991' });
  });

  it('the signature is sha256= HMAC-SHA256 of "<timestamp>.<body>", computed independently', async () => {
    await channel().deliver(outbound);
    const [request] = receiver.received();
    const { createHmac } = await import('node:crypto');
    const expected = createHmac('sha256', SECRET)
      .update(`${NOW}.${request!.raw.toString('utf8')}`)
      .digest('hex');
    expect(request?.headers['x-mindledger-signature']).toBe(`sha256=${expected}`);
  });

  it('refuses a wrong secret, a tampered body, a stale timestamp and missing headers', async () => {
    await channel().deliver(outbound);
    const { headers, raw } = receiver.received()[0]!;
    const tampered = Buffer.from(raw.toString('utf8').replace('42', '43'));

    expect(verifyWebhookSignature('other-secret', headers, raw, NOW)).toEqual({
      ok: false,
      reason: 'the X-Mindledger-Signature does not match the body',
    });
    expect(verifyWebhookSignature(SECRET, headers, tampered, NOW)).toMatchObject({ ok: false });
    expect(verifyWebhookSignature(SECRET, headers, raw, NOW + 301)).toEqual({
      ok: false,
      reason: 'the X-Mindledger-Timestamp header is 301 s away from now (more than 300 s)',
    });
    expect(
      verifyWebhookSignature(SECRET, { ...headers, 'x-mindledger-signature': undefined }, raw, NOW),
    ).toEqual({
      ok: false,
      reason: 'the X-Mindledger-Signature header is missing',
    });
    expect(verifyWebhookSignature(SECRET, {}, raw, NOW)).toEqual({
      ok: false,
      reason: 'the X-Mindledger-Timestamp header is missing',
    });
  });

  it('sends no signature without a secret, and any 2xx is delivered', async () => {
    receiver.handle(() => ({ status: 204 }));
    const delivery = await channel(null).deliver({ ...outbound, threadId: 't-1' });

    const [request] = receiver.received();
    expect(request?.headers['x-mindledger-signature']).toBeUndefined();
    expect(request?.headers['x-mindledger-timestamp']).toBe(String(NOW));
    expect(JSON.parse(request!.raw.toString('utf8'))).toMatchObject({ thread_id: 't-1' });
    expect(delivery).toEqual({ externalId: null });
  });

  it('maps 429 and 503 to retryable, honouring Retry-After in seconds or as a date', async () => {
    receiver.handle(() => ({ status: 429, headers: { 'retry-after': '2' }, body: 'slow down' }));
    const limited = await rejection(channel().deliver(outbound), ChannelError);
    expect(limited).toMatchObject({
      channel: 'webhook',
      reason: 'rate_limited',
      retryable: true,
      status: 429,
      retryAfterMs: 2000,
    });
    expect(limited.message).toBe(`Webhook POST ${receiver.url('/hooks/chat')} failed: HTTP 429: slow down`);

    const at = new Date(Date.now() + 30_000).toUTCString();
    receiver.handle(() => ({ status: 503, headers: { 'retry-after': at } }));
    const down = await rejection(channel().deliver(outbound), ChannelError);
    expect(down).toMatchObject({ reason: 'unavailable', retryable: true, status: 503 });
    expect(down.retryAfterMs).toBeGreaterThan(25_000);
    expect(down.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('maps 408 and 500 to retryable, other 4xx to permanent', async () => {
    const outcomes = [];
    for (const status of [408, 500, 400, 401, 403, 404, 410, 422]) {
      receiver.handle(() => ({ status }));
      const error = await rejection(channel().deliver(outbound), ChannelError);
      outcomes.push([status, error.reason, error.retryable]);
    }
    expect(outcomes).toEqual([
      [408, 'timeout', true],
      [500, 'unavailable', true],
      [400, 'rejected', false],
      [401, 'unauthorized', false],
      [403, 'unauthorized', false],
      [404, 'rejected', false],
      [410, 'rejected', false],
      [422, 'rejected', false],
    ]);
  });

  it('does not follow a redirect (it would drop the body) and does not quote the secret back', async () => {
    receiver.handle((r) =>
      r.path.startsWith('/hooks')
        ? { status: 302, headers: { location: '/elsewhere?token=zzz' } }
        : { status: 200 },
    );
    const redirect = await rejection(channel().deliver(outbound), ChannelError);
    expect(redirect).toMatchObject({ reason: 'rejected', retryable: false, status: 302 });
    expect(redirect.message).toBe(
      `Webhook POST ${receiver.url('/hooks/chat')} failed: HTTP 302 redirect to ${receiver.url('/elsewhere')} (configure the final URL)`,
    );
    expect(receiver.received()).toHaveLength(1);

    receiver.handle(() => ({ status: 400, body: `bad signature for secret ${SECRET}` }));
    const echoed = await rejection(channel().deliver(outbound), ChannelError);
    expect(echoed.message).not.toContain(SECRET);
    expect(echoed.message).toContain('bad signature for secret ***');
  });

  it('maps an unreachable receiver and a slow one to retryable', async () => {
    const port = await closedPort();
    const down = webhookChannel({ url: `http://127.0.0.1:${port}/hook` });
    const refused = await rejection(down.deliver(outbound), ChannelError);
    expect(refused).toMatchObject({ reason: 'network', retryable: true });
    expect(refused.message).toBe(
      `Webhook POST http://127.0.0.1:${port}/hook failed: could not reach http://127.0.0.1:${port} (ECONNREFUSED)`,
    );

    receiver.handle(() => ({ status: 200, delayMs: 1000 }));
    const slow = await rejection(channel(SECRET, 100).deliver(outbound), ChannelError);
    expect(slow).toMatchObject({ reason: 'timeout', retryable: true });
  });

  it('reads an inbound webhook body as an InboundMessage', () => {
    const body = webhookInboundBody.parse({ chat_id: 7, user: 'alice', text: 'hi', message_id: 'm-1' });
    expect(webhookInbound(body, '2024-01-01T00:00:00.000Z')).toEqual({
      chatId: '7',
      user: 'alice',
      text: 'hi',
      externalId: 'm-1',
      fromBot: false,
      threadId: null,
      messageId: 'm-1',
      receivedAt: '2024-01-01T00:00:00.000Z',
    });
    expect(webhookInbound(webhookInboundBody.parse({ chat_id: 'c', text: 'x' }))).toMatchObject({
      user: 'anonymous',
      externalId: null,
    });
    expect(webhookInboundBody.safeParse({ chat_id: 'c' }).success).toBe(false);
  });
});
