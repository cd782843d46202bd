import type { Request } from 'express';

/**
 * Whether the request's URL has a query string. Express 5 parses `req.query` afresh on every read;
 * middleware that looks for one parameter on every request asks this first.
 */
export const hasQuery = (req: Request) => req.url.includes('?');
