/**
 * The one place errors become HTTP answers (src/http/problem.ts): a read that meets DuckDB out of
 * its memory (a heavy query holds DUCKDB_MEMORY_LIMIT) is a 503 with Retry-After, the server busy,
 * not a 500; anything unforeseen is still a 500 that names no detail of the error.
 */
import express from 'express';
import pino from 'pino';
import supertest from 'supertest';
import { errorMapper } from '../../src/http/problem';

const appThrowing = (error: unknown) => {
  const app = express();
  app.get('/read', () => {
    throw error;
  });
  app.use(errorMapper(pino({ level: 'silent' })));
  return supertest(app);
};

describe('errors as HTTP answers', () => {
  it("given a read meeting DuckDB out of memory, then 503 problem+json with Retry-After, naming the limit and not DuckDB's advice", async () => {
    const res = await appThrowing(
      new Error(
        "Out of Memory Error: failed to allocate data of size 4.0 KiB (300.0 MiB/300.0 MiB used)\n\nPossible solutions:\n* Increasing the memory limit (SET memory_limit='...GB')",
      ),
    ).get('/read');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('1');
    expect(JSON.parse(res.text)).toEqual({
      title: 'Server busy',
      detail: "The server's query engine is out of memory (DUCKDB_MEMORY_LIMIT); try again shortly",
      status: 503,
    });
  });

  it('given an error nothing foresaw, then 500 saying it was logged, quoting nothing of it', async () => {
    const res = await appThrowing(new Error('secret detail of a bug: Out of Memory Error later')).get(
      '/read',
    );
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({
      title: 'Internal error',
      detail: 'The server hit a bug while handling this request; it has been logged.',
      status: 500,
    });
  });
});
