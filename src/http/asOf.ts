import type { RequestHandler } from 'express';
import type { Duck } from '../duckdb/database';
import { readAsOf } from '../projection/asOfReads';
import { invalid } from '../shared/errors';
import { truncate } from './problem';
import { hasQuery } from './query';
import { timestampText } from '../shared/time';

const AS_OF_PARAM = 'as_of';
const AS_OF_POSITION_HEADER = 'X-As-Of-Position';

/** The position of the last event recorded at or before `moment` (0: before the first event). */
const positionAt = async (duck: Pick<Duck, 'query'>, moment: Date): Promise<bigint> => {
  const utc = timestampText(moment);
  const [row] = await duck.query(
    'SELECT coalesce(max(global_position), 0) AS position FROM events WHERE recorded_at <= CAST(? AS TIMESTAMP)',
    [utc],
  );
  return BigInt(row!.position as bigint | number);
};

/**
 * `GET …?as_of=<position or ISO-8601 moment>`: the answer as it was then. The request's reads see
 * the resource tables as of that log position (projection/asOfReads.ts); the answer names the
 * position in X-As-Of-Position. Only reads travel in time: any other method with `as_of` is a 400.
 */
export const asOfReads = (duck: Pick<Duck, 'query'>): RequestHandler => {
  const readAsOfParam: RequestHandler = async (req, res, next) => {
    const value = req.query[AS_OF_PARAM];
    if (value === undefined) return next();
    const shown = JSON.stringify(truncate(String(value), 40));
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw invalid(`as_of reads the past: it applies to GET requests, not ${req.method}`, 'Invalid as_of');
    const text = String(value);
    let position: bigint;
    if (/^[0-9]{1,18}$/.test(text)) position = BigInt(text);
    else if (/^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(Date.parse(text)))
      position = await positionAt(duck, new Date(text));
    else
      throw invalid(
        `as_of must be a log position (a whole number, as X-Log-Position gives it) or an ISO-8601 moment such as 2026-11-22T10:00:00Z (got ${shown})`,
        'Invalid as_of',
      );
    res.setHeader(AS_OF_POSITION_HEADER, position.toString());
    readAsOf(position, next);
  };
  // Synchronous for a URL without a query string (nearly every request): no promise to settle.
  return (req, res, next) => (hasQuery(req) ? readAsOfParam(req, res, next) : next());
};
