/**
 * A Slack on a real socket (127.0.0.1, a free port) for the channel engine and the chatbots that
 * use it. Both directions of the protocol:
 *   - the Web API our service calls (`auth.test`, `chat.postMessage`): Bearer token checked, JSON or
 *     form bodies, failures the Slack way (HTTP 200 `{ok:false, error}`, HTTP 429 with Retry-After),
 *     every call recorded, and scriptable failures for the next calls;
 *   - the Events API Slack calls on us: `sendEvent` / `sendUrlVerification` POST the envelope to the
 *     service under test, signed with the signing secret (`X-Slack-Signature`,
 *     `X-Slack-Request-Timestamp`), with Slack's retry headers when asked.
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeSlackOptions = {
  /** The bot token the Web API accepts (`xoxb-…`). */
  readonly token: string;
  /** The bot's own user id (`auth.test`'s `user_id`, the author of what it posts). */
  readonly botUserId: string;
  /** Signs the events sent to the service. */
  readonly signingSecret: string;
  readonly botId?: string;
  readonly teamId?: string;
  /** When set, posting anywhere else answers `channel_not_found`. */
  readonly channels?: readonly string[];
};

/** How the next call of a Web API method fails. */
export type SlackFailure =
  /** `{ok:false, error}` with this HTTP status (Slack's own: 200; 429 for rate limits). */
  | {
      readonly type: 'error';
      readonly error: string;
      readonly status?: number;
      readonly retryAfterSeconds?: number;
    }
  /** A bare HTTP answer (a 500 from Slack's edge, an HTML page). */
  | { readonly type: 'http'; readonly status: number; readonly body?: string }
  /** Never answers; the client's timeout or abort ends it. */
  | { readonly type: 'hang' };

export const slackFailure = {
  /** What Slack answers a client over its rate limit: HTTP 429, Retry-After, `ratelimited`. */
  ratelimited: (retryAfterSeconds = 1): SlackFailure => ({
    type: 'error',
    error: 'ratelimited',
    status: 429,
    retryAfterSeconds,
  }),
  /** HTTP 200 `{ok:false, error}`: `channel_not_found`, `not_in_channel`, `invalid_auth`, … */
  error: (error: string): SlackFailure => ({ type: 'error', error }),
  serverError: (status = 500): SlackFailure => ({
    type: 'http',
    status,
    body: `<html><body><h1>${status} Server Error</h1></body></html>`,
  }),
  hang: (): SlackFailure => ({ type: 'hang' }),
};

export type SlackRecordedRequest = {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed body (JSON or form fields). */
  readonly body: Record<string, unknown>;
};

export type SlackPosted = {
  readonly channel: string;
  readonly text: string;
  readonly thread_ts: string | null;
  /** The ts Slack gave the posted message. */
  readonly ts: string;
};

/** A user's message as the Events API carries it (`event` in an `event_callback`). */
export type SlackMessageEvent = {
  type: 'message' | 'app_mention';
  channel: string;
  user?: string;
  text?: string;
  ts: string;
  event_ts?: string;
  thread_ts?: string;
  channel_type?: string;
  subtype?: string;
  bot_id?: string;
  [key: string]: unknown;
};

export type SlackSendOptions = {
  readonly eventId?: string;
  /** `X-Slack-Request-Timestamp`, Unix seconds (default: now). */
  readonly timestamp?: number;
  /** Sign with this secret instead of the configured one (a forged request). */
  readonly signWith?: string;
  /** Send this `X-Slack-Signature` as is. */
  readonly signature?: string;
  /** Send no signature headers at all. */
  readonly unsigned?: boolean;
  /** Slack's redelivery headers: `X-Slack-Retry-Num` (1–3) and `X-Slack-Retry-Reason`. */
  readonly retryNum?: number;
  readonly retryReason?: string;
  /** Change the raw body after signing (a tampered request). */
  readonly tamper?: (body: string) => string;
};

export type SlackSent = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
  /** The answer as JSON, when it is. */
  readonly json: unknown;
  /** The raw body sent. */
  readonly body: string;
  readonly eventId: string | null;
};

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

const parseArgs = (raw: string, contentType: string): Record<string, unknown> => {
  if (!raw) return {};
  if (contentType.includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw));
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
};

export type FakeSlack = Awaited<ReturnType<typeof startFakeSlack>>;

export const startFakeSlack = async (options: FakeSlackOptions) => {
  const botId = options.botId ?? 'B0FAKEBOT';
  const teamId = options.teamId ?? 'T0FAKE';
  const appId = 'A0FAKEAPP';
  let requests: SlackRecordedRequest[] = [];
  let posted: SlackPosted[] = [];
  const failures = new Map<string, SlackFailure[]>();
  let tsCounter = 0;
  let eventCounter = 0;

  /** Slack's ts: Unix seconds and a 6-digit sequence, unique and increasing. */
  const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++tsCounter).padStart(6, '0')}`;

  const json = (
    res: http.ServerResponse,
    status: number,
    value: unknown,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(value));
  };

  const answerFailure = (res: http.ServerResponse, failure: SlackFailure) => {
    if (failure.type === 'hang') return;
    if (failure.type === 'http') {
      res.writeHead(failure.status, { 'content-type': 'text/html' });
      res.end(failure.body ?? '');
      return;
    }
    json(
      res,
      failure.status ?? 200,
      { ok: false, error: failure.error },
      failure.retryAfterSeconds !== undefined ? { 'retry-after': String(failure.retryAfterSeconds) } : {},
    );
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const match = /^\/api\/([A-Za-z.]+)$/.exec(url.pathname);
      if (!match) return json(res, 404, { ok: false, error: 'unknown_method' });
      const method = match[1]!;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = String(v);
      const body = {
        ...Object.fromEntries(url.searchParams),
        ...parseArgs(raw, headers['content-type'] ?? ''),
      };
      requests.push({ method, headers, body });

      const failure = failures.get(method)?.shift();
      if (failure) return answerFailure(res, failure);

      // Slack takes the token as a Bearer header, or as a `token` argument.
      const auth = headers.authorization;
      const token = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : body.token;
      if (token === undefined || token === '') return json(res, 200, { ok: false, error: 'not_authed' });
      if (token !== options.token) return json(res, 200, { ok: false, error: 'invalid_auth' });

      if (method === 'auth.test')
        return json(res, 200, {
          ok: true,
          url: 'https://fake-workspace.slack.com/',
          team: 'Fake Workspace',
          user: 'mindledger',
          team_id: teamId,
          user_id: options.botUserId,
          bot_id: botId,
          is_enterprise_install: false,
        });

      if (method === 'chat.postMessage') {
        const channel = typeof body.channel === 'string' ? body.channel : '';
        if (!channel || (options.channels && !options.channels.includes(channel)))
          return json(res, 200, { ok: false, error: 'channel_not_found' });
        const text = typeof body.text === 'string' ? body.text : '';
        if (!text.trim() && body.blocks === undefined && body.attachments === undefined)
          return json(res, 200, { ok: false, error: 'no_text' });
        const threadTs = typeof body.thread_ts === 'string' && body.thread_ts ? body.thread_ts : null;
        const ts = nextTs();
        posted.push({ channel, text, thread_ts: threadTs, ts });
        return json(res, 200, {
          ok: true,
          channel,
          ts,
          message: {
            type: 'message',
            subtype: 'bot_message',
            text,
            user: options.botUserId,
            bot_id: botId,
            app_id: appId,
            team: teamId,
            ts,
            ...(threadTs ? { thread_ts: threadTs } : {}),
          },
        });
      }
      return json(res, 200, { ok: false, error: 'unknown_method' });
    })().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { ok: false, error: String(error) });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const sign = (body: string, timestamp: number, secret = options.signingSecret) =>
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;

  /** POSTs a raw payload to the service as Slack does, signed unless told otherwise. */
  const send = async (
    targetUrl: string,
    payload: unknown,
    opts: SlackSendOptions,
    eventId: string | null,
  ) => {
    const body = JSON.stringify(payload);
    const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    };
    if (!opts.unsigned) {
      headers['x-slack-request-timestamp'] = String(timestamp);
      headers['x-slack-signature'] = opts.signature ?? sign(body, timestamp, opts.signWith);
    }
    if (opts.retryNum !== undefined) {
      headers['x-slack-retry-num'] = String(opts.retryNum);
      headers['x-slack-retry-reason'] = opts.retryReason ?? 'http_timeout';
    }
    const sent = opts.tamper ? opts.tamper(body) : body;
    const response = await fetch(targetUrl, { method: 'POST', headers, body: sent });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const answerHeaders: Record<string, string> = {};
    response.headers.forEach((v, k) => (answerHeaders[k] = v));
    return { status: response.status, headers: answerHeaders, text, json: parsed, body: sent, eventId };
  };

  return {
    origin,
    /** The Web API root the adapter's `baseUrl` takes. */
    baseUrl: `${origin}/api`,
    port,
    /** A user's message event with a fresh ts (`type: 'app_mention'` for a mention of the bot). */
    userMessage(fields: {
      channel: string;
      user: string;
      text: string;
      threadTs?: string;
      type?: 'message' | 'app_mention';
    }): SlackMessageEvent {
      const ts = nextTs();
      return {
        type: fields.type ?? 'message',
        channel: fields.channel,
        user: fields.user,
        text: fields.text,
        ts,
        event_ts: ts,
        channel_type: 'channel',
        client_msg_id: randomBytes(8).toString('hex'),
        team: teamId,
        ...(fields.threadTs ? { thread_ts: fields.threadTs } : {}),
      };
    },
    /** The event_callback envelope Slack wraps an event in. */
    envelope(event: SlackMessageEvent | Record<string, unknown>, eventId?: string) {
      return {
        token: 'fake-verification-token',
        team_id: teamId,
        api_app_id: appId,
        event,
        type: 'event_callback',
        event_id: eventId ?? `Ev${String(++eventCounter).padStart(8, '0')}FAKE`,
        event_time: Math.floor(Date.now() / 1000),
        authorizations: [
          {
            enterprise_id: null,
            team_id: teamId,
            user_id: options.botUserId,
            is_bot: true,
            is_enterprise_install: false,
          },
        ],
        is_ext_shared_channel: false,
        event_context: `4-fake-${eventCounter}`,
      };
    },
    /** `v0=` HMAC of `v0:<timestamp>:<body>` under the signing secret (or `secret`). */
    sign,
    /** POSTs an `event_callback` carrying `event` to the service, signed like Slack. */
    async sendEvent(
      targetUrl: string,
      event: SlackMessageEvent | Record<string, unknown>,
      opts: SlackSendOptions = {},
    ): Promise<SlackSent> {
      const payload = this.envelope(event, opts.eventId);
      return send(targetUrl, payload, opts, payload.event_id);
    },
    /** POSTs Slack's `url_verification` handshake; the service must answer with the challenge. */
    async sendUrlVerification(targetUrl: string, opts: SlackSendOptions & { challenge?: string } = {}) {
      const challenge = opts.challenge ?? randomBytes(16).toString('base64url');
      const sent = await send(
        targetUrl,
        { token: 'fake-verification-token', challenge, type: 'url_verification' },
        opts,
        null,
      );
      return { ...sent, challenge };
    },
    /** The next calls of chat.postMessage fail this way, in order. */
    failNext(...next: SlackFailure[]) {
      return this.failNextOn('chat.postMessage', ...next);
    },
    /** The next calls of `method` fail this way, in order. */
    failNextOn(method: string, ...next: SlackFailure[]) {
      failures.set(method, [...(failures.get(method) ?? []), ...next]);
      return this;
    },
    /** Messages posted with chat.postMessage, in order. */
    posted: (): readonly SlackPosted[] => posted,
    requests: (): readonly SlackRecordedRequest[] => requests,
    reset() {
      requests = [];
      posted = [];
      failures.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
