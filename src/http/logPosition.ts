import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import type { ProjectionRunner } from '../projection/runner';
import { readModelAt } from '../projection/readModelAt';
import { invalid } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { hasQuery } from './query';
import { truncate } from './problem';

/*
 * Read-your-writes across processes on one log. A write's answer names the log position of the last
 * event it appended (X-Log-Position); a request that carries a position (X-Min-Log-Position, or
 * ?min_position=) is answered only once this process's read model includes it.
 */

const LOG_POSITION_HEADER = 'X-Log-Position';
const MIN_LOG_POSITION_HEADER = 'X-Min-Log-Position';
const MIN_LOG_POSITION_PARAM = 'min_position';

const LARGEST_POSITION = 2n ** 63n - 1n;

/** A log position as X-Log-Position gives it: a decimal integer that fits PostgreSQL's bigint. */
const logPosition = z
  .string()
  .regex(/^[0-9]{1,19}$/)
  .transform((text) => BigInt(text))
  .refine((position) => position <= LARGEST_POSITION);

/**
 * Every answer to a request that appended events carries the position of the last one. Services
 * record it in the request's context (`noteAppended`); the header is set as the status line goes
 * out, whichever way the answer is written (a route, the error mapper, a 202). Mount it after the
 * access log, which opens the request's context with its `appended` record.
 */
export const logPositionHeader: RequestHandler = (_req, res, next) => {
  const appended = currentRequest()?.appended;
  if (!appended) return next();
  const writeHead = res.writeHead;
  res.writeHead = ((...args: unknown[]) => {
    if (appended.last !== null && !res.headersSent)
      res.setHeader(LOG_POSITION_HEADER, appended.last.toString());
    return writeHead.apply(res, args as Parameters<typeof writeHead>);
  }) as typeof res.writeHead;
  next();
};

/** The position the request asks for (the higher of header and parameter), or null when it names none. */
const minLogPositionOf = (req: Request): bigint | null => {
  const parse = (value: unknown, name: string) => {
    if (value === undefined) return null;
    const parsed = logPosition.safeParse(value);
    if (!parsed.success)
      throw invalid(
        `${name} must be a log position: a decimal integer from 0 to ${LARGEST_POSITION}, as ${LOG_POSITION_HEADER} gives it (got ${JSON.stringify(truncate(String(value), 40))})`,
        `Invalid ${name}`,
      );
    return parsed.data;
  };
  const fromHeader = parse(req.headers[MIN_LOG_POSITION_HEADER.toLowerCase()], MIN_LOG_POSITION_HEADER);
  const fromQuery = hasQuery(req)
    ? parse(req.query[MIN_LOG_POSITION_PARAM], `${MIN_LOG_POSITION_PARAM} (query parameter)`)
    : null;
  if (fromHeader === null) return fromQuery;
  if (fromQuery === null) return fromHeader;
  return fromHeader > fromQuery ? fromHeader : fromQuery;
};

/**
 * Holds a request that names a log position until this process's read model includes it: reads
 * then show the client's own writes made on another process, and writes whose checks read the
 * read model (the project exists) see them too. Past `waitMs`: 503 with Retry-After, naming the
 * position asked and the position reached; nothing was read or written.
 */
export const awaitMinLogPosition = (
  projections: Pick<ProjectionRunner, 'waitFor' | 'highestApplied'>,
  waitMs: number,
): RequestHandler => {
  const waitForPosition = async (wanted: bigint, next: () => void) => {
    await readModelAt(projections, wanted, waitMs, `log position ${wanted} (${MIN_LOG_POSITION_HEADER})`);
    next();
  };
  // Synchronous when the request names no position (nearly every request): no promise to settle.
  return (req, _res, next) => {
    const wanted = minLogPositionOf(req);
    // Position 0 precedes every event: there is nothing to wait for.
    if (wanted === null || wanted === 0n) return next();
    return waitForPosition(wanted, next);
  };
};
