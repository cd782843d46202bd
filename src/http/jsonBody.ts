import express, { type RequestHandler } from 'express';

/**
 * Levels a request body may add around the free-form values the event contract bounds by
 * MAX_JSON_DEPTH (`{"agent": {"params": …}}`, `{"database": {"parameters": …}}`, SQL `params`).
 * A value slightly too deep still reaches the contract, which names the field; a body far deeper
 * than any request needs is refused here, before anything walks it.
 */
export const BODY_ENVELOPE_DEPTH = 8;

/**
 * The error body-parser passes on from `verify` (it keeps our `type`), mapped to a 400 by problem.ts.
 * A body deeper than MAX_JSON_DEPTH plus the envelope holds a free-form value deeper than
 * MAX_JSON_DEPTH, whatever the route: the message says that, as the event contract would.
 */
class JsonTooDeep extends Error {
  readonly type = 'entity.too.deep';
  constructor(
    readonly maxJsonDepth: number,
    readonly maxBodyDepth: number,
  ) {
    super(`JSON nested deeper than ${maxBodyDepth} levels`);
    this.name = 'JsonTooDeep';
  }
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The nesting of JSON text, counted on its bytes before it is parsed: one pass, no allocation, so a
 * body of ten million `[` is refused without building ten million arrays. Valid for UTF-8 (and
 * ASCII), where no byte of a multi-byte character is a bracket or a quote; a syntax error is left
 * for the parser to report.
 */
export const jsonTextExceedsDepth = (bytes: Uint8Array, maxDepth: number): boolean => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
  }
  return false;
};

/** The nesting of a parsed value (a scalar is 0, `{}` is 1), walked with its own stack. */
export const valueExceedsDepth = (value: unknown, maxDepth: number): boolean => {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Object.values(v as Record<string, unknown>))
      stack.push({ value: child, depth: depth + 1 });
  }
  return false;
};

const isUtf8 = (encoding: string | null | undefined) =>
  encoding === null || encoding === undefined || /^utf-?8$/i.test(encoding);

/**
 * express.json with a depth bound: UTF-8 bodies (nearly all) are measured on their bytes before the
 * parse; bodies in another charset (UTF-16/32, which body-parser also accepts) after it.
 */
export const jsonBody = (options: { limit: string; maxJsonDepth: number }): RequestHandler[] => {
  const maxDepth = options.maxJsonDepth + BODY_ENVELOPE_DEPTH;
  // Requests whose bytes were measured already: their parsed body need not be walked again.
  const measured = new WeakSet<object>();
  return [
    express.json({
      limit: options.limit,
      type: ['application/json', 'application/*+json'],
      verify: (req, _res, buffer, encoding) => {
        // Incoming webhooks are signed over their exact bytes (Slack, our own webhook channel).
        if (req.url?.startsWith('/api/webhooks/')) (req as { rawBody?: Buffer }).rawBody = buffer;
        if (!isUtf8(encoding)) return;
        if (jsonTextExceedsDepth(buffer, maxDepth)) throw new JsonTooDeep(options.maxJsonDepth, maxDepth);
        measured.add(req);
      },
    }),
    (req, _res, next) => {
      const body: unknown = req.body;
      if (
        !measured.has(req) &&
        body !== null &&
        typeof body === 'object' &&
        valueExceedsDepth(body, maxDepth)
      )
        return next(new JsonTooDeep(options.maxJsonDepth, maxDepth));
      next();
    },
  ];
};
