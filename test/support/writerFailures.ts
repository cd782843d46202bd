import type { DuckDBConnection } from '@duckdb/node-api';
import { PassThrough } from 'node:stream';
import type { TestApp } from './app';

/**
 * DuckDB's report of a memory shortage, as the read model's writer met it under heavy queries. A
 * shortage cannot be timed to one statement, so specs inject the report on the writer's connection.
 */
export const OUT_OF_MEMORY =
  'Out of Memory Error: failed to allocate data of size 4.0 KiB (299.9 MiB/300.0 MiB used)';

type Run = DuckDBConnection['run'];

/** How one text the writer runs goes: as usual, or with a reported failure before or after it ran. */
export type WriterInjection = 'run' | 'fail before' | 'fail after' | 'begin only, then fail';

/**
 * Calls `inject` with each text the writer runs; it answers how this call goes. DuckDB runs for
 * real: only the report of a failure is made up.
 */
export const injectOnWriter = (t: TestApp, inject: (sql: string) => WriterInjection) => {
  const writer = t.running.ctx.duck.writer;
  const original: Run = writer.run.bind(writer);
  const texts: string[] = [];
  const injected: Run = async (sql, ...rest) => {
    texts.push(sql);
    switch (inject(sql)) {
      case 'run':
        return original(sql, ...rest);
      case 'fail before':
        throw new Error(OUT_OF_MEMORY);
      case 'fail after':
        await original(sql, ...rest);
        throw new Error(OUT_OF_MEMORY);
      case 'begin only, then fail':
        await original('BEGIN TRANSACTION');
        throw new Error(OUT_OF_MEMORY);
    }
  };
  writer.run = injected;
  return { texts, restore: () => (writer.run = original) };
};

/** A log stream for `startTestApp` and the messages of the lines written to it, in order. */
export const loggedMessages = () => {
  const messages: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line.trim()) messages.push(String((JSON.parse(line) as { msg?: unknown }).msg));
  });
  return { logStream, messages };
};
