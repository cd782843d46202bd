import type { IncomingHttpHeaders } from 'node:http';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { DomainError, invalid } from '../shared/errors';
import { toJsonSafe } from '../shared/json';
import { KeptJson } from './keptJson';
import { holdsLongArray, sendSlicedJson } from './slicedJson';

export type HttpResult = {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The body holds only JSON values already (no bigint, no NaN), so it is sent as is. */
  jsonSafe?: boolean;
  /** A text answer instead of a JSON body (the Prometheus exposition format); `headers` name its type. */
  text?: string;
  /**
   * A `text/event-stream` answer instead of a body: `produce` sends `data: <json>` events until it
   * settles; `signal` aborts when the client goes away. An error it throws after the stream began
   * cannot be a problem+json any more: `onError` turns it into a last event.
   */
  eventStream?: {
    produce: (send: (event: unknown) => void, signal: AbortSignal) => Promise<void>;
    onError: (error: unknown) => unknown;
  };
};

type Method = 'get' | 'post' | 'put' | 'delete';
/** A route's answers by status, as the OpenAPI document describes them. */
export type RouteResponses = Record<
  number,
  { description: string; schema?: z.ZodType; contentType?: string }
>;
type AnyObjectSchema = z.ZodObject<z.ZodRawShape>;

type RouteInput<P, Q, B> = {
  params: P;
  query: Q;
  body: B;
  headers: IncomingHttpHeaders;
  /** Aborted when the client goes away, so long work can stop. */
  signal: AbortSignal;
  /** The raw request, for the few routes that stream their body (file uploads). */
  request: Request;
};

type RouteDefinition<
  P extends AnyObjectSchema | undefined,
  Q extends AnyObjectSchema | undefined,
  B extends z.ZodType | undefined,
> = {
  method: Method;
  /** Express syntax (`/api/projects/:project`); the OpenAPI document gets `{project}`. */
  path: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Checked before the body is even parsed (e.g. "does the project exist"), as MindsDB does. */
  before?: (input: { params: P extends AnyObjectSchema ? z.infer<P> : undefined }) => Promise<void>;
  responses: RouteResponses;
  /** The request body as OpenAPI should describe it, for routes that read it themselves. */
  documentedBody?: { contentType: string; schema: z.ZodType };
  handle: (
    input: RouteInput<
      P extends AnyObjectSchema ? z.infer<P> : undefined,
      Q extends AnyObjectSchema ? z.infer<Q> : undefined,
      B extends z.ZodType ? z.infer<B> : undefined
    >,
  ) => Promise<HttpResult>;
};

const describeIssues = (where: string, error: z.ZodError) =>
  error.issues
    .map((i) => {
      const at = [where, ...i.path.map(String)].filter(Boolean).join('.');
      return at ? `${at}: ${i.message}` : i.message;
    })
    .join('; ');

const parseWith = <S extends z.ZodType | undefined>(schema: S, value: unknown, where: string) => {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(describeIssues(where, result.error), 'Invalid request');
  return result.data;
};

const hasBody = (req: Request) =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/** A path's first two segments, lower-cased (routes are case-insensitive): `/api/projects`. */
const groupKey = (path: string) => {
  const second = path.indexOf('/', 1);
  const third = second < 0 ? -1 : path.indexOf('/', second + 1);
  return (third < 0 ? path : path.slice(0, third)).toLowerCase();
};

const problemSchema = z.object({ title: z.string(), detail: z.string(), status: z.number().int() });

/**
 * Routes are declared once: the same definition mounts the express handler (validation included)
 * and registers the OpenAPI path, so the document cannot drift from the code.
 */
export class Api {
  readonly registry = new OpenAPIRegistry();
  readonly router: Router = express.Router({ strict: false, caseSensitive: false });
  readonly routes: { method: Method; path: string }[] = [];
  /**
   * Routes by their first two path segments (`/api/projects`), each group a router of its own:
   * express tries a router's routes one after the other, and a request to the last of some ninety
   * routes matched every path before it. The request's own two segments pick its group. Read by
   * the spec that checks every mounted route is documented.
   */
  private readonly byKey = new Map<string, Router>();
  readonly groups: ReadonlyMap<string, Router> = this.byKey;
  /** The bytes sent for bodies made once per cached list (`presentedOnce`), sent again as they are. */
  readonly kept = new KeptJson();

  constructor() {
    this.router.use((req, res, next) => {
      const group = this.byKey.get(groupKey(req.path));
      if (group) group(req, res, next);
      else next();
    });
  }

  private groupFor(path: string): Router {
    const key = groupKey(path);
    if (/[:*?(){}]/.test(key))
      throw new Error(`A route's first two path segments must be literal, to group it (${path})`);
    let group = this.byKey.get(key);
    if (!group) this.byKey.set(key, (group = express.Router({ strict: false, caseSensitive: false })));
    return group;
  }

  add<
    P extends AnyObjectSchema | undefined,
    Q extends AnyObjectSchema | undefined,
    B extends z.ZodType | undefined,
  >(def: RouteDefinition<P, Q, B>): this {
    this.routes.push({ method: def.method, path: def.path });
    const openApiPath = def.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const responses = Object.fromEntries(
      Object.entries(def.responses).map(([status, r]) => [
        status,
        {
          description: r.description,
          // A write's answer names where its events are in the log (read-your-writes, src/http/logPosition.ts).
          ...(def.method !== 'get' && Number(status) < 300 ? { headers: APPENDED_POSITION_HEADER } : {}),
          ...(r.schema
            ? {
                content: {
                  [r.contentType ??
                  (Number(status) >= 400 ? 'application/problem+json' : 'application/json')]: {
                    schema: r.schema,
                  },
                },
              }
            : {}),
        },
      ]),
    );
    this.registry.registerPath({
      method: def.method,
      path: openApiPath,
      summary: def.summary,
      tags: [def.tag],
      request: {
        headers: MIN_POSITION_REQUEST_HEADER,
        ...(def.params ? { params: def.params } : {}),
        ...(def.query ? { query: def.query } : {}),
        ...(def.body
          ? { body: { content: { 'application/json': { schema: def.body } }, required: true } }
          : {}),
      },
      responses: {
        ...responses,
        400: responses[400] ?? {
          description: 'Invalid input',
          content: { 'application/problem+json': { schema: problemSchema } },
        },
      },
    });

    this.groupFor(def.path)[def.method](def.path, async (req: Request, res: Response) => {
      const params = parseWith(def.params, req.params, 'path') as never;
      if (def.before) await def.before({ params });
      const query = parseWith(def.query, req.query, 'query') as never;
      let body: unknown = undefined;
      if (def.body) {
        if (hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
          throw new DomainError(
            'UnsupportedMediaType',
            'Unsupported media type',
            `This endpoint takes application/json, not ${req.headers['content-type'] ?? 'an untyped body'}`,
          );
        }
        body = parseWith(def.body, req.body, 'body');
      }
      let controller: AbortController | undefined;
      const result = await def.handle({
        params,
        query,
        body: body as never,
        headers: req.headers,
        request: req,
        // Made on first use: most routes never need it, and it costs a listener per request.
        get signal() {
          if (!controller) {
            const c = (controller = new AbortController());
            res.on('close', () => {
              if (!res.writableFinished) c.abort();
            });
          }
          return controller.signal;
        },
      });
      for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
      if (result.eventStream) return streamEvents(res, result.status, result.eventStream);
      if (result.text !== undefined) res.status(result.status).send(result.text);
      else if (result.body === undefined) res.status(result.status).end();
      else if (!this.sentAsKept(res, result)) {
        const body = result.jsonSafe ? result.body : toJsonSafe(result.body);
        // A long list (a batch's predictions, a SQL answer's rows) is written in slices; GET and
        // HEAD keep express's ETag.
        if (req.method !== 'GET' && req.method !== 'HEAD' && holdsLongArray(body))
          sendSlicedJson(res, result.status, body);
        else res.status(result.status).json(body);
      }
    });
    return this;
  }

  /**
   * Sends a body `presentedOnce` made as the bytes kept from its first answer, as `res.json` would
   * send it: its type (unless the route named one), then the same `res.send` (length, the ETag when
   * the app makes them, 304 to a fresh conditional GET, no body to HEAD). False for any other body,
   * or when the app's JSON settings would make other text of it.
   */
  private sentAsKept(res: Response, result: HttpResult): boolean {
    const app = res.app;
    if (res.get('Content-Type') !== undefined) return false;
    if (app.get('json replacer') || app.get('json spaces') || app.get('json escape')) return false;
    const bytes = this.kept.bytesOf(result.body, () =>
      JSON.stringify(result.jsonSafe ? result.body : toJsonSafe(result.body)),
    );
    if (!bytes) return false;
    res.status(result.status).set('Content-Type', 'application/json').send(bytes);
    return true;
  }

  openApiDocument(info: { title: string; version: string }) {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        ...info,
        description: 'MindsDB-compatible HTTP API over an event log (see README.md and docs/).',
      },
    });
  }
}

/** Every route waits for a log position a client names (read-your-writes across processes). */
const MIN_POSITION_REQUEST_HEADER = z.object({
  'X-Min-Log-Position': z
    .string()
    .regex(/^[0-9]{1,19}$/)
    .optional()
    .describe(
      'Answer only once this process has applied the log up to this position (a write’s X-Log-Position); also ?min_position=. 503 with Retry-After if it does not within READ_MIN_POSITION_WAIT_MS.',
    ),
});
const APPENDED_POSITION_HEADER = {
  'X-Log-Position': {
    description: 'The log position of the last event this request appended (absent when it appended none)',
    schema: { type: 'string' as const, pattern: '^[0-9]+$' },
  },
};

/** Server-sent events: one `data:` line of JSON per event, flushed as it is produced. */
const streamEvents = async (
  res: Response,
  status: number,
  stream: NonNullable<HttpResult['eventStream']>,
) => {
  res.status(status);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const send = (event: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(`data: ${JSON.stringify(toJsonSafe(event))}\n\n`);
  };
  try {
    await stream.produce(send, controller.signal);
  } catch (error) {
    send(stream.onError(error));
  }
  res.end();
};

/** Problem-details schema for `responses` entries. */
export const problem = (description: string) => ({ description, schema: problemSchema });

/** `If-Match: "12"` → 12n; absent → undefined; anything else is a 412 by definition. */
export const ifMatchVersion = (headers: IncomingHttpHeaders): bigint | undefined => {
  const raw = headers['if-match'];
  if (raw === undefined || raw === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(raw);
  if (!m) return -1n;
  return BigInt(m[1]!);
};

export const etag = (version: bigint | number) => ({ ETag: `"${version}"` });
