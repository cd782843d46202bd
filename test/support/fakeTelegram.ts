/**
 * A Telegram Bot API on a real socket (127.0.0.1, a free port): `{origin}/bot<token>/<method>`,
 * parameters in the query, a JSON body or a form, answers `{ok, result}` or
 * `{ok:false, error_code, description, parameters?}` with the HTTP status of `error_code`.
 *
 * `getUpdates` keeps Telegram's semantics:
 *   - updates stay queued until confirmed: a call with `offset` forgets every update below it
 *     (a negative offset keeps only the last -offset);
 *   - long polling: with `timeout` > 0 and nothing queued, the request is held until an update is
 *     pushed (answered at once) or `timeout` seconds pass (answered `[]`);
 *   - one poller at a time: a getUpdates arriving while another is held ends the held one with
 *     409 "Conflict: terminated by other getUpdates request".
 * `sendMessage` records what the bot sends and answers the Message Telegram would; failures can be
 * scripted for the next calls of any method (429 with `parameters.retry_after`, 5xx, 403, …).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeTelegramOptions = {
  readonly token: string;
  readonly bot?: { readonly id: number; readonly username: string; readonly first_name: string };
  /** A bot can only write to chats that wrote to it first: others answer 400 "chat not found". */
  readonly knownChatsOnly?: boolean;
};

export type TelegramUser = {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
};

export type TelegramMessage = {
  message_id: number;
  from?: TelegramUser;
  chat: { id: number; type: string; title?: string; username?: string; first_name?: string };
  date: number;
  text?: string;
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: TelegramMessage;
  [key: string]: unknown;
};

export type TelegramUpdate = { update_id: number; [kind: string]: unknown };

export type TelegramFailure =
  | {
      readonly type: 'error';
      readonly code: number;
      readonly description: string;
      readonly retryAfterSeconds?: number;
    }
  /** A bare HTTP answer (the nginx page in front of the Bot API when it is down). */
  | { readonly type: 'http'; readonly status: number; readonly body?: string }
  | { readonly type: 'hang' };

export const telegramFailure = {
  tooManyRequests: (retryAfterSeconds = 1): TelegramFailure => ({
    type: 'error',
    code: 429,
    description: `Too Many Requests: retry after ${retryAfterSeconds}`,
    retryAfterSeconds,
  }),
  serverError: (code = 500): TelegramFailure => ({
    type: 'error',
    code,
    description: 'Internal Server Error',
  }),
  badGateway: (): TelegramFailure => ({
    type: 'http',
    status: 502,
    body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
  }),
  blocked: (): TelegramFailure => ({
    type: 'error',
    code: 403,
    description: 'Forbidden: bot was blocked by the user',
  }),
  chatNotFound: (): TelegramFailure => ({
    type: 'error',
    code: 400,
    description: 'Bad Request: chat not found',
  }),
  error: (code: number, description: string): TelegramFailure => ({ type: 'error', code, description }),
  hang: (): TelegramFailure => ({ type: 'hang' }),
};

export type TelegramRecordedRequest = {
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;
};

export type TelegramSent = {
  readonly chat_id: string;
  readonly text: string;
  /** From `reply_parameters.message_id` or the older `reply_to_message_id`. */
  readonly reply_to_message_id: number | null;
  readonly message_thread_id: number | null;
  /** The id Telegram gave the sent message. */
  readonly message_id: number;
};

const CONFLICT =
  'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

/** Query and form values are strings; Telegram reads JSON-looking ones (`reply_parameters`) as JSON. */
const fromText = (value: string): unknown => {
  if (/^-?\d+$/.test(value)) return Number(value);
  if (value.startsWith('{') || value.startsWith('[')) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  return value;
};

const paramsOf = (url: URL, raw: string, contentType: string): Record<string, unknown> => {
  const params: Record<string, unknown> = {};
  for (const [k, v] of url.searchParams) params[k] = fromText(v);
  if (!raw) return params;
  if (contentType.includes('application/json')) {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) Object.assign(params, value);
  } else if (contentType.includes('application/x-www-form-urlencoded'))
    for (const [k, v] of new URLSearchParams(raw)) params[k] = fromText(v);
  return params;
};

const intParam = (value: unknown): number | undefined => {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
};

export type FakeTelegram = Awaited<ReturnType<typeof startFakeTelegram>>;

export const startFakeTelegram = async (options: FakeTelegramOptions) => {
  const bot: TelegramUser = {
    id: options.bot?.id ?? 7_000_000_001,
    is_bot: true,
    first_name: options.bot?.first_name ?? 'Mindledger',
    username: options.bot?.username ?? 'mindledger_bot',
  };
  let queue: TelegramUpdate[] = [];
  let nextUpdateId = 500_000_001;
  const messageIds = new Map<string, number>();
  const knownChats = new Set<string>();
  let sent: TelegramSent[] = [];
  let requests: TelegramRecordedRequest[] = [];
  const failures = new Map<string, TelegramFailure[]>();
  type Held = { res: http.ServerResponse; limit: number; timer: NodeJS.Timeout };
  let held: Held | null = null;

  const nextMessageId = (chatId: string) => {
    const id = (messageIds.get(chatId) ?? 0) + 1;
    messageIds.set(chatId, id);
    return id;
  };

  const send = (
    res: http.ServerResponse,
    status: number,
    value: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  const ok = (res: http.ServerResponse, result: unknown) => send(res, 200, { ok: true, result });
  const error = (res: http.ServerResponse, code: number, description: string, parameters?: object) =>
    send(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });

  const answerFailure = (res: http.ServerResponse, failure: TelegramFailure) => {
    if (failure.type === 'hang') return;
    if (failure.type === 'http') {
      res.writeHead(failure.status, { 'content-type': 'text/html' });
      res.end(failure.body ?? '');
      return;
    }
    error(
      res,
      failure.code,
      failure.description,
      failure.retryAfterSeconds !== undefined ? { retry_after: failure.retryAfterSeconds } : undefined,
    );
  };

  const release = (answer: (h: Held) => void) => {
    const h = held;
    if (!h) return;
    held = null;
    clearTimeout(h.timer);
    answer(h);
  };

  const getUpdates = (params: Record<string, unknown>, res: http.ServerResponse) => {
    // A second poller ends the one waiting, as Telegram does.
    release((h) => error(h.res, 409, CONFLICT));
    const offset = intParam(params.offset);
    if (offset !== undefined && offset > 0) queue = queue.filter((u) => u.update_id >= offset);
    else if (offset !== undefined && offset < 0) queue = queue.slice(offset);
    const limit = Math.min(100, Math.max(1, intParam(params.limit) ?? 100));
    const timeout = Math.max(0, intParam(params.timeout) ?? 0);
    if (queue.length > 0 || timeout === 0) return ok(res, queue.slice(0, limit));
    const h: Held = {
      res,
      limit,
      timer: setTimeout(() => release((x) => ok(x.res, [])), timeout * 1000),
    };
    held = h;
    res.on('close', () => {
      if (held === h) release(() => undefined);
    });
  };

  const sendMessage = (params: Record<string, unknown>, res: http.ServerResponse) => {
    const rawChat = params.chat_id;
    const chatId = typeof rawChat === 'number' || typeof rawChat === 'string' ? String(rawChat) : '';
    if (!chatId) return error(res, 400, 'Bad Request: chat_id is empty');
    if (options.knownChatsOnly && !knownChats.has(chatId))
      return error(res, 400, 'Bad Request: chat not found');
    const text = typeof params.text === 'string' ? params.text : '';
    if (!text.trim()) return error(res, 400, 'Bad Request: message text is empty');
    if (text.length > 4096) return error(res, 400, 'Bad Request: message is too long');
    const replyParameters =
      typeof params.reply_parameters === 'object' && params.reply_parameters !== null
        ? (params.reply_parameters as Record<string, unknown>)
        : {};
    const replyTo = intParam(replyParameters.message_id) ?? intParam(params.reply_to_message_id) ?? null;
    const threadId = intParam(params.message_thread_id) ?? null;
    const messageId = nextMessageId(chatId);
    sent.push({
      chat_id: chatId,
      text,
      reply_to_message_id: replyTo,
      message_thread_id: threadId,
      message_id: messageId,
    });
    const numeric = /^-?\d+$/.test(chatId);
    return ok(res, {
      message_id: messageId,
      from: bot,
      chat: numeric
        ? { id: Number(chatId), type: Number(chatId) < 0 ? 'supergroup' : 'private' }
        : { id: chatId, type: 'channel' },
      date: Math.floor(Date.now() / 1000),
      text,
      ...(threadId !== null ? { message_thread_id: threadId, is_topic_message: true } : {}),
      ...(replyTo !== null
        ? { reply_to_message: { message_id: replyTo, chat: { id: Number(chatId) } } }
        : {}),
    });
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (!match) return error(res, 404, 'Not Found');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = String(v);
      let params: Record<string, unknown>;
      try {
        params = paramsOf(url, raw, headers['content-type'] ?? '');
      } catch {
        return error(res, 400, "Bad Request: can't parse JSON object");
      }
      const method = match[2]!.toLowerCase();
      requests.push({ method, params, headers });
      if (match[1] !== options.token) return error(res, 401, 'Unauthorized');
      const failure = failures.get(method)?.shift();
      if (failure) return answerFailure(res, failure);
      if (method === 'getme')
        return ok(res, {
          ...bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        });
      if (method === 'getupdates') return getUpdates(params, res);
      if (method === 'sendmessage') return sendMessage(params, res);
      return error(res, 404, 'Not Found');
    })().catch((e: unknown) => {
      if (!res.headersSent) error(res, 500, `fake-telegram: ${String(e)}`);
      else res.destroy();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const pushUpdate = (content: Record<string, unknown>): TelegramUpdate => {
    const update = { update_id: nextUpdateId++, ...content };
    queue.push(update);
    release((h) => ok(h.res, queue.slice(0, h.limit)));
    return update;
  };

  return {
    origin,
    /** The Bot API root the adapter's `baseUrl` takes. */
    baseUrl: origin,
    port,
    bot,
    /** Queues an update with a text message (a user's, unless `from.is_bot`) and wakes a held poll. */
    pushMessage(fields: {
      chatId: number;
      text: string;
      from?: Partial<TelegramUser>;
      chatType?: string;
      threadId?: number;
    }): TelegramUpdate & { message: TelegramMessage } {
      const chatKey = String(fields.chatId);
      knownChats.add(chatKey);
      const from: TelegramUser = {
        id: fields.from?.id ?? (fields.chatId > 0 ? fields.chatId : 1001),
        is_bot: fields.from?.is_bot ?? false,
        first_name: fields.from?.first_name ?? 'Alice',
        // `username: undefined` on purpose: a user without one.
        ...(fields.from && 'username' in fields.from
          ? fields.from.username !== undefined
            ? { username: fields.from.username }
            : {}
          : { username: 'alice' }),
        ...(fields.from?.last_name !== undefined ? { last_name: fields.from.last_name } : {}),
      };
      const message: TelegramMessage = {
        message_id: nextMessageId(chatKey),
        from,
        chat:
          fields.chatId > 0
            ? { id: fields.chatId, type: fields.chatType ?? 'private', first_name: from.first_name }
            : { id: fields.chatId, type: fields.chatType ?? 'supergroup', title: 'Fake group' },
        date: Math.floor(Date.now() / 1000),
        text: fields.text,
        ...(fields.threadId !== undefined
          ? { message_thread_id: fields.threadId, is_topic_message: true }
          : {}),
      };
      return pushUpdate({ message }) as TelegramUpdate & { message: TelegramMessage };
    },
    /** Queues any other update (`{ edited_message: … }`, `{ callback_query: … }`); the id is assigned. */
    pushUpdate,
    /** The next calls of `method` (case-insensitive, e.g. 'sendMessage') fail this way, in order. */
    failNextOn(method: string, ...next: TelegramFailure[]) {
      const key = method.toLowerCase();
      failures.set(key, [...(failures.get(key) ?? []), ...next]);
      return this;
    },
    /** Same as failNextOn('sendMessage', …). */
    failNextSend(...next: TelegramFailure[]) {
      return this.failNextOn('sendMessage', ...next);
    },
    /** Messages the bot sent, in order. */
    sent: (): readonly TelegramSent[] => sent,
    /** Updates not yet confirmed by an offset. */
    pending: (): readonly TelegramUpdate[] => queue,
    /** Whether a getUpdates is being held (long polling, nothing to answer yet). */
    polling: () => held !== null,
    requests: (): readonly TelegramRecordedRequest[] => requests,
    reset() {
      release((h) => ok(h.res, []));
      queue = [];
      sent = [];
      requests = [];
      failures.clear();
      knownChats.clear();
      messageIds.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        release((h) => ok(h.res, []));
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
