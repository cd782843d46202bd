/**
 * A scripted OpenAI-compatible provider on a real socket (127.0.0.1, a free port), for every test
 * that needs an LLM or embeddings: agents, knowledge bases, chatbots. It speaks the wire protocol
 * the `openai` SDK parses (JSON completions, SSE `chat.completion.chunk`s ending in `[DONE]`,
 * tool-call deltas split mid-JSON, the usage chunk), records every request, and can be told to
 * fail in each way providers do.
 *
 * Scripting, in the order a chat request is answered:
 *   1. rules (`fake.when(match, reply, {times})`), the first that matches;
 *   2. the FIFO queue (`fake.enqueue(...)`);
 *   3. the fallback (`fake.conversation([...])`, `fake.setFallback(...)`); by default a 500 that
 *      says nothing was scripted, so a forgotten script fails loudly.
 * A reply may be a function of the request (e.g. a model that never stops calling tools).
 * The same is reachable over HTTP for other processes: POST /__fake/script, GET /__fake/requests,
 * POST /__fake/reset.
 *
 * A batched request (several rows in one, `response_format` json_schema `row_answers`, as
 * src/llmCalls/batching.ts sends them) is answered row by row through the same script, each row as
 * if asked alone, and the answers returned keyed by row; `batchFault` drops or garbles a row.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeToolCall = {
  readonly name: string;
  /** An object is sent as JSON; a string is sent as is (so it can be malformed on purpose). */
  readonly arguments?: unknown;
  readonly id?: string;
};

type ReplyOptions = {
  /** Wait before answering (slow provider). */
  readonly delayMs?: number;
  /** Answer once this settles (a provider the spec holds, then lets go). */
  readonly heldUntil?: Promise<unknown>;
  /** Wait between stream chunks. */
  readonly chunkDelayMs?: number;
  /** Streams only: destroy the socket after this many chunks, before `[DONE]`. */
  readonly cutAfterChunks?: number;
  /** Streams only: size of the argument fragments (default 5, so JSON splits mid-token). */
  readonly argumentsChunkSize?: number;
  /** Overrides the natural finish reason (`stop` / `tool_calls`). */
  readonly finishReason?: string;
  readonly usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
};

export type FakeReply =
  | (ReplyOptions & { readonly type: 'text'; readonly content: string; readonly chunks?: readonly string[] })
  | (ReplyOptions & {
      readonly type: 'tool_calls';
      readonly calls: readonly FakeToolCall[];
      readonly content?: string;
    })
  | (ReplyOptions & {
      readonly type: 'error';
      readonly status: number;
      readonly message?: string;
      readonly code?: string | null;
      readonly errorType?: string;
      readonly headers?: Readonly<Record<string, string>>;
    })
  /** Never answers; the client's timeout or abort ends it. */
  | { readonly type: 'hang' };

export type FakeChatMessage = {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};
export type FakeChatBody = {
  model: string;
  messages: FakeChatMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  tool_choice?: unknown;
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  response_format?: { type: string; json_schema?: { name?: string; schema?: unknown } };
};

/**
 * What the stand-in does to one row of a batched request (src/llmCalls/batching.ts): `drop` leaves
 * it out of the answer, `garble` answers it with no text (`{"row": n, "answer": 42}`), `duplicate`
 * names its row twice (its answer and its neighbour's).
 */
export type BatchFault = 'drop' | 'garble' | 'duplicate';

export type RecordedRequest = {
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
};

export type Responder = FakeReply | ((request: FakeChatBody) => FakeReply);

export type FakeMatch = {
  /** The last user message contains this text, or matches this pattern. */
  readonly lastUser?: string | RegExp;
  /** The tool results since the last assistant message include one from this tool. */
  readonly hasToolResult?: string;
  /** One of those tool results contains this text. */
  readonly toolResultIncludes?: string;
  readonly model?: string;
  readonly when?: (request: FakeChatBody) => boolean;
};

/** Builders for the replies tests need most. */
export const fakeReply = {
  text: (content: string, options: ReplyOptions & { chunks?: string[] } = {}): FakeReply => ({
    type: 'text',
    content,
    ...options,
  }),
  toolCall: (name: string, args: unknown = {}, options: ReplyOptions & { id?: string } = {}): FakeReply => ({
    type: 'tool_calls',
    calls: [{ name, arguments: args, id: options.id }],
    ...options,
  }),
  toolCalls: (calls: FakeToolCall[], options: ReplyOptions = {}): FakeReply => ({
    type: 'tool_calls',
    calls,
    ...options,
  }),
  error: (
    status: number,
    message: string,
    options: { code?: string | null; errorType?: string; headers?: Record<string, string> } = {},
  ): FakeReply => ({ type: 'error', status, message, ...options }),
  /** What OpenAI answers to a wrong key (it quotes part of the key back). */
  invalidKey: (key = 'sk-wrong-key-1234'): FakeReply => ({
    type: 'error',
    status: 401,
    message: `Incorrect API key provided: ${key.slice(0, 3)}****${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    code: 'invalid_api_key',
    errorType: 'invalid_request_error',
  }),
  rateLimited: (retryAfterSeconds = 0): FakeReply => ({
    type: 'error',
    status: 429,
    message: 'Rate limit reached for requests',
    code: 'rate_limit_exceeded',
    errorType: 'requests',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  serverError: (status = 500): FakeReply => ({
    type: 'error',
    status,
    message: 'The server had an error while processing your request.',
    errorType: 'server_error',
  }),
  hang: (): FakeReply => ({ type: 'hang' }),
};

/** Deterministic text embeddings: hashed bag of words, L2-normalised, so similar texts are near. */
export const fakeEmbedding = (text: string, dimensions = 64): number[] => {
  const v = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dimensions]! += (h & 0x80000000) === 0 ? 1 : -1;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  if (norm === 0) {
    v[0] = 1;
    return v;
  }
  return v.map((x) => x / norm);
};

const contentText = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof p === 'object' && p !== null && 'text' in p ? String(p.text) : ''))
      .join('');
  return '';
};

const wordCount = (s: string) => (s.match(/\S+/g) ?? []).length;

/** The tool results sent since the model last spoke, with the name of the tool each answers. */
export const latestToolResults = (body: FakeChatBody) => {
  const lastAssistant = body.messages.map((m) => m.role).lastIndexOf('assistant');
  const names = new Map<string, string>();
  for (const m of body.messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  return body.messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => ({ name: names.get(m.tool_call_id ?? '') ?? '', content: contentText(m.content) }));
};

export const lastUserText = (body: FakeChatBody) =>
  contentText([...body.messages].reverse().find((m) => m.role === 'user')?.content);

const matches = (match: FakeMatch, body: FakeChatBody) => {
  if (match.model !== undefined && body.model !== match.model) return false;
  if (match.lastUser !== undefined) {
    const text = lastUserText(body);
    if (typeof match.lastUser === 'string' ? !text.includes(match.lastUser) : !match.lastUser.test(text))
      return false;
  }
  if (match.hasToolResult !== undefined || match.toolResultIncludes !== undefined) {
    const results = latestToolResults(body);
    if (match.hasToolResult !== undefined && !results.some((r) => r.name === match.hasToolResult))
      return false;
    if (
      match.toolResultIncludes !== undefined &&
      !results.some((r) => r.content.includes(match.toolResultIncludes!))
    )
      return false;
  }
  return match.when ? match.when(body) : true;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

/** The JSON form of a match for the HTTP control plane: patterns as strings. */
type WireMatch = { lastUser?: string; hasToolResult?: string; toolResultIncludes?: string; model?: string };
type WireScript = {
  rules?: { match?: WireMatch; respond: FakeReply; times?: number }[];
  queue?: FakeReply[];
  conversation?: FakeReply[];
  fallback?: FakeReply;
};

export type FakeOpenAiOptions = {
  /** When set, any other `Authorization: Bearer` key gets OpenAI's 401. */
  readonly apiKeys?: readonly string[];
  readonly embeddingDimensions?: number;
  /** `base64`: answer base64 whatever the request asked (some servers ignore `encoding_format`). */
  readonly embeddingEncoding?: 'as_requested' | 'base64';
  readonly models?: readonly string[];
  /**
   * A keyless local server (Ollama, vLLM, LM Studio behind a proxy that allows none): any request
   * carrying an `Authorization` or `api-key` header is refused with a 401.
   */
  readonly rejectCredentials?: boolean;
};

/** The batch format's name in `response_format.json_schema` (src/llmCalls/batching.ts). */
const BATCH_SCHEMA_NAME = 'row_answers';

/** A batched request's rows, or undefined when the request is not a batch. */
export const batchRowsOf = (body: FakeChatBody): { row: number; request: string }[] | undefined => {
  if (body.response_format?.type !== 'json_schema') return undefined;
  if (body.response_format.json_schema?.name !== BATCH_SCHEMA_NAME) return undefined;
  try {
    const parsed = JSON.parse(lastUserText(body)) as { requests?: { row: number; request: string }[] };
    return Array.isArray(parsed.requests) ? parsed.requests : undefined;
  } catch {
    return undefined;
  }
};

export type FakeOpenAi = Awaited<ReturnType<typeof startFakeOpenAi>>;

export const startFakeOpenAi = async (options: FakeOpenAiOptions = {}) => {
  type Rule = { match: FakeMatch; responder: Responder; remaining: number };
  let rules: Rule[] = [];
  let queue: Responder[] = [];
  const embeddingFailures: FakeReply[] = [];
  const unscripted: FakeReply = fakeReply.error(500, 'fake-openai: nothing was scripted for this request');
  let fallback: Responder = unscripted;
  let requests: RecordedRequest[] = [];
  let seq = 0;
  let ids = 0;

  const pick = (body: FakeChatBody): FakeReply => {
    const rule = rules.find((r) => r.remaining > 0 && matches(r.match, body));
    let responder: Responder;
    if (rule) {
      rule.remaining--;
      responder = rule.responder;
    } else responder = queue.shift() ?? fallback;
    return typeof responder === 'function' ? responder(body) : responder;
  };

  const sendError = (res: http.ServerResponse, reply: Extract<FakeReply, { type: 'error' }>) => {
    res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
    res.end(
      JSON.stringify({
        error: {
          message: reply.message ?? `fake error ${reply.status}`,
          type: reply.errorType ?? 'invalid_request_error',
          param: null,
          code: reply.code ?? null,
        },
      }),
    );
  };

  const usageOf = (body: FakeChatBody, reply: Extract<FakeReply, { type: 'text' | 'tool_calls' }>) => {
    if (reply.usage) return reply.usage;
    const prompt = body.messages.reduce((n, m) => n + wordCount(contentText(m.content)) + 1, 0);
    const completion =
      reply.type === 'text'
        ? wordCount(reply.content)
        : reply.calls.length * 8 + wordCount(reply.content ?? '');
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  };

  const argumentsText = (call: FakeToolCall) =>
    typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});

  const callId = (call: FakeToolCall, i: number, completionId: number) =>
    call.id ?? `call_${completionId}_${i}`;

  const closed = (res: http.ServerResponse) =>
    new Promise<void>((resolve) => {
      if (res.destroyed || res.writableEnded) return resolve();
      res.once('close', () => resolve());
    });

  type FaultRule = { match: string | RegExp; fault: BatchFault; remaining: number };
  let batchFaults: FaultRule[] = [];
  /** Set: batched requests get this reply whole (a provider that ignores the batch format). */
  let batchResponder: Responder | undefined;

  /**
   * A batched request answered row by row: each row's request is put to the script as if asked
   * alone (the prompts' own system messages, the row's request as the user message), and the
   * answers returned keyed by row; the slowest row's delay, the first error (or hang) for all.
   */
  const pickBatch = (body: FakeChatBody, rows: { row: number; request: string }[]): FakeReply => {
    const shared = body.messages.slice(0, -2);
    const replies = rows.map((r) =>
      pick({
        ...body,
        messages: [...shared, { role: 'user', content: r.request }],
        response_format: undefined,
      }),
    );
    const stop = replies.find((r) => r.type === 'error' || r.type === 'hang');
    if (stop) return stop;
    let answers: unknown[] = rows.map((r, k) => {
      const reply = replies[k]!;
      return {
        row: r.row,
        answer:
          reply.type === 'text' ? reply.content : reply.type === 'tool_calls' ? (reply.content ?? '') : '',
      };
    });
    for (const [k, r] of rows.entries()) {
      const rule = batchFaults.find(
        (f) =>
          f.remaining > 0 &&
          (typeof f.match === 'string' ? r.request.includes(f.match) : f.match.test(r.request)),
      );
      if (!rule) continue;
      rule.remaining--;
      if (rule.fault === 'drop') answers = answers.filter((a) => (a as { row: number }).row !== r.row);
      else if (rule.fault === 'garble')
        answers = answers.map((a) => ((a as { row: number }).row === r.row ? { row: r.row, answer: 42 } : a));
      else {
        const neighbour = rows[k + 1] ?? rows[k - 1];
        if (neighbour)
          answers.push({
            row: r.row,
            answer: (answers[rows.indexOf(neighbour)] as { answer: string }).answer,
          });
      }
    }
    const delayMs = Math.max(0, ...replies.map((r) => ('delayMs' in r ? (r.delayMs ?? 0) : 0)));
    return { type: 'text', content: JSON.stringify({ answers }), ...(delayMs ? { delayMs } : {}) };
  };

  const answerChat = async (body: FakeChatBody, res: http.ServerResponse) => {
    const rows = batchRowsOf(body);
    const wholeBatch = rows && batchResponder;
    const reply = wholeBatch
      ? typeof wholeBatch === 'function'
        ? wholeBatch(body)
        : wholeBatch
      : rows
        ? pickBatch(body, rows)
        : pick(body);
    if (reply.type === 'hang') return closed(res);
    if (reply.delayMs) await Promise.race([sleep(reply.delayMs), closed(res)]);
    if (reply.heldUntil) await Promise.race([reply.heldUntil, closed(res)]);
    if (res.destroyed) return;
    if (reply.type === 'error') return sendError(res, reply);
    const completionId = ++ids;
    const id = `chatcmpl-fake-${completionId}`;
    const created = 1_700_000_000 + completionId;
    const finishReason = reply.finishReason ?? (reply.type === 'tool_calls' ? 'tool_calls' : 'stop');
    const usage = usageOf(body, reply);
    const content = reply.type === 'text' ? reply.content : (reply.content ?? null);

    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [
            {
              index: 0,
              finish_reason: finishReason,
              logprobs: null,
              message: {
                role: 'assistant',
                content,
                refusal: null,
                ...(reply.type === 'tool_calls'
                  ? {
                      tool_calls: reply.calls.map((c, i) => ({
                        id: callId(c, i, completionId),
                        type: 'function',
                        function: { name: c.name, arguments: argumentsText(c) },
                      })),
                    }
                  : {}),
              },
            },
          ],
          usage,
        }),
      );
      return;
    }

    const deltas: { delta: Record<string, unknown>; finish_reason: string | null }[] = [
      { delta: { role: 'assistant', content: '' }, finish_reason: null },
    ];
    const text = reply.type === 'text' ? reply.content : (reply.content ?? '');
    const textChunks =
      reply.type === 'text' && reply.chunks
        ? reply.chunks
        : (text.match(/\s*\S+\s*/g) ?? (text ? [text] : []));
    for (const piece of textChunks) deltas.push({ delta: { content: piece }, finish_reason: null });
    if (reply.type === 'tool_calls') {
      const size = reply.argumentsChunkSize ?? 5;
      reply.calls.forEach((c, index) => {
        deltas.push({
          delta: {
            tool_calls: [
              {
                index,
                id: callId(c, index, completionId),
                type: 'function',
                function: { name: c.name, arguments: '' },
              },
            ],
          },
          finish_reason: null,
        });
        const args = argumentsText(c);
        for (let at = 0; at < args.length; at += size)
          deltas.push({
            delta: { tool_calls: [{ index, function: { arguments: args.slice(at, at + size) } }] },
            finish_reason: null,
          });
      });
    }
    deltas.push({ delta: {}, finish_reason: finishReason });

    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    let written = 0;
    const write = async (payload: string) => {
      if (reply.cutAfterChunks !== undefined && written >= reply.cutAfterChunks) {
        res.socket?.destroy();
        return false;
      }
      if (res.destroyed) return false;
      // Flushed before going on, so a cut that follows loses nothing already "sent".
      await new Promise<void>((resolve) => res.write(`data: ${payload}\n\n`, () => resolve()));
      written++;
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      return true;
    };
    for (const d of deltas) {
      const ok = await write(
        JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created,
          model: body.model,
          choices: [{ index: 0, delta: d.delta, logprobs: null, finish_reason: d.finish_reason }],
        }),
      );
      if (!ok) return;
    }
    if (body.stream_options?.include_usage) {
      const ok = await write(
        JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created,
          model: body.model,
          choices: [],
          usage,
        }),
      );
      if (!ok) return;
    }
    if (!(await write('[DONE]'))) return;
    res.end();
  };

  const answerEmbeddings = async (body: Record<string, unknown>, res: http.ServerResponse) => {
    const failure = embeddingFailures.shift();
    if (failure?.type === 'hang') return closed(res);
    if (failure && 'delayMs' in failure && failure.delayMs) await sleep(failure.delayMs);
    if (failure?.type === 'error') return sendError(res, failure);
    const input = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : [];
    const dims = typeof body.dimensions === 'number' ? body.dimensions : (options.embeddingDimensions ?? 64);
    const base64 = body.encoding_format === 'base64' || options.embeddingEncoding === 'base64';
    const data = input.map((item, index) => {
      const vector = fakeEmbedding(typeof item === 'string' ? item : JSON.stringify(item), dims);
      return {
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
      };
    });
    const tokens = input.reduce<number>((n, item) => n + wordCount(String(item)), 0);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      }),
    );
  };

  const models = options.models ?? ['fake-model', 'fake-embedding'];

  const applyScript = (script: WireScript) => {
    for (const r of script.rules ?? [])
      rules.push({
        match: {
          ...r.match,
          lastUser: r.match?.lastUser !== undefined ? new RegExp(r.match.lastUser) : undefined,
        },
        responder: r.respond,
        remaining: r.times ?? Infinity,
      });
    queue.push(...(script.queue ?? []));
    if (script.conversation) fallback = conversationResponder(script.conversation);
    if (script.fallback) fallback = script.fallback;
  };

  const json = (res: http.ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const path = url.pathname.replace(/\/+$/, '');
      let body: unknown = undefined;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        return json(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
      }
      if (path.startsWith('/__fake')) {
        if (req.method === 'GET' && path === '/__fake/requests') return json(res, 200, requests);
        if (req.method === 'POST' && path === '/__fake/reset') {
          reset();
          return json(res, 200, { ok: true });
        }
        if (req.method === 'POST' && path === '/__fake/script') {
          applyScript(body as WireScript);
          return json(res, 200, { ok: true });
        }
        return json(res, 404, { error: { message: 'unknown control path' } });
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = String(v);
      requests.push({
        seq: ++seq,
        method: req.method ?? 'GET',
        path,
        query: Object.fromEntries(url.searchParams),
        headers,
        body,
      });

      if (
        options.rejectCredentials &&
        (req.headers.authorization !== undefined || req.headers['api-key'] !== undefined)
      )
        return sendError(res, {
          type: 'error',
          status: 401,
          message: 'fake-openai: this server takes no credentials, and the request carried one',
          code: 'unexpected_credentials',
        });
      if (options.apiKeys) {
        const key = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
        if (!options.apiKeys.includes(key)) {
          const invalid = fakeReply.invalidKey(key || 'none');
          if (invalid.type === 'error') return sendError(res, invalid);
        }
      }
      if (req.method === 'POST' && path === '/v1/chat/completions')
        return answerChat(body as FakeChatBody, res);
      if (req.method === 'POST' && path === '/v1/embeddings')
        return answerEmbeddings((body ?? {}) as Record<string, unknown>, res);
      if (req.method === 'GET' && path === '/v1/models')
        return json(res, 200, {
          object: 'list',
          data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })),
        });
      if (req.method === 'GET' && path.startsWith('/v1/models/')) {
        const id = decodeURIComponent(path.slice('/v1/models/'.length));
        if (models.includes(id))
          return json(res, 200, { id, object: 'model', created: 1_700_000_000, owned_by: 'fake' });
        return sendError(res, {
          type: 'error',
          status: 404,
          message: `The model '${id}' does not exist`,
          code: 'model_not_found',
        });
      }
      return sendError(res, {
        type: 'error',
        status: 404,
        message: `fake-openai: no route ${req.method} ${path}`,
      });
    })().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  });

  /** Replies by turn: the n-th reply after the user's last message (count of assistant turns since). */
  const conversationResponder =
    (replies: readonly FakeReply[]) =>
    (body: FakeChatBody): FakeReply => {
      const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
      const turn = body.messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
      return (
        replies[turn] ?? fakeReply.error(500, `fake-openai: the scripted conversation has no turn ${turn}`)
      );
    };

  const reset = () => {
    rules = [];
    queue = [];
    embeddingFailures.length = 0;
    batchFaults = [];
    batchResponder = undefined;
    fallback = unscripted;
    requests = [];
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    origin,
    /** The `baseURL` clients use. */
    baseUrl: `${origin}/v1`,
    port,
    /** Answer requests that match, first match wins; `times` bounds how often (default: always). */
    when(match: FakeMatch, responder: Responder, opts: { times?: number } = {}) {
      rules.push({ match, responder, remaining: opts.times ?? Infinity });
      return this;
    },
    /** Answer the next requests, in order (after rules). */
    enqueue(...responders: Responder[]) {
      queue.push(...responders);
      return this;
    },
    /**
     * Answer by turn within the current question: the first model call after the user's message
     * gets replies[0], the next replies[1], … Safe for concurrent conversations.
     */
    conversation(replies: readonly FakeReply[]) {
      fallback = conversationResponder(replies);
      return this;
    },
    setFallback(responder: Responder) {
      fallback = responder;
      return this;
    },
    /** The next embeddings requests fail (or are slow) this way, in order. */
    failEmbeddings(...replies: FakeReply[]) {
      embeddingFailures.push(...replies);
      return this;
    },
    /**
     * Batched requests (src/llmCalls/batching.ts) mishandle the row whose request matches: `drop`,
     * `garble` or `duplicate` it (BatchFault), `times` times (default once).
     */
    batchFault(match: string | RegExp, fault: BatchFault, opts: { times?: number } = {}) {
      batchFaults.push({ match, fault, remaining: opts.times ?? 1 });
      return this;
    },
    /** Batched requests are answered whole by this (undefined: row by row through the script). */
    answerBatchesWith(responder: Responder | undefined) {
      batchResponder = responder;
      return this;
    },
    /** Same as POST /__fake/script. */
    script: applyScript,
    reset,
    requests: (): readonly RecordedRequest[] => requests,
    /** Bodies of the chat completion requests, in arrival order. */
    chatRequests: (): FakeChatBody[] =>
      requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as FakeChatBody),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
