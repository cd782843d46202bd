import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unavailable } from '../shared/errors';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';

export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;
export type JsRow = Record<string, unknown>;

/**
 * The read side: one DuckDB database per API process. The projection runner owns one connection
 * (the only writer); readers borrow connections from a small pool, so an analyst's slow query never
 * queues behind another and MVCC keeps them consistent with the writer's commits.
 */
export type Duck = {
  readonly instance: DuckDBInstance;
  readonly writer: DuckDBConnection;
  /** Runs `work` on a pooled reader connection. */
  withReader<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T>;
  /** Whether the calling async context holds a pooled reader (its reads run on it). */
  holdsReader(): boolean;
  /** Convenience: a parameterised query on a reader, rows as plain JS values. */
  query(sql: string, params?: SqlParams): Promise<JsRow[]>;
  close(): Promise<void>;
};

export const openDuck = async (options: {
  /** A file path, or ':memory:'. */
  file: string;
  /** Files the SQL endpoint may read (uploads); everything else is off limits. */
  allowedDirectory: string;
  readers?: number;
  threads?: number;
  /** How long a read waits for a pooled connection before answering "busy". */
  acquireTimeoutMs?: number;
}): Promise<Duck> => {
  if (options.file !== ':memory:')
    fs.mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
  fs.mkdirSync(options.allowedDirectory, { recursive: true });
  const instance = await DuckDBInstance.create(options.file, {
    // No network here and no reason to fetch code at run time: unknown extensions fail fast.
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Bulk loads and scans want every core; many small queries are served by the pooled
    // connections (and the answer cache) rather than by intra-query parallelism.
    threads: String(options.threads ?? Math.max(1, os.availableParallelism())),
  });
  const writer = await instance.connect();
  // These switches only take effect as statements, in this order (stack-notes §7). Once the
  // configuration is locked, user SQL can neither widen file access nor change settings.
  const allowed = path.resolve(options.allowedDirectory).replace(/'/g, "''") + '/';
  await writer.run(`SET allowed_directories = ['${allowed}']`);
  await writer.run('SET enable_external_access = false');
  await writer.run('SET lock_configuration = true');

  const idle: DuckDBConnection[] = [];
  const waiting: { grant: (c: DuckDBConnection) => void }[] = [];
  const readers = options.readers ?? 8;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? 10_000;
  for (let i = 0; i < readers; i++) idle.push(await instance.connect());

  const acquire = (): Promise<DuckDBConnection> => {
    const c = idle.pop();
    if (c) return Promise.resolve(c);
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: (granted: DuckDBConnection) => {
          clearTimeout(timer);
          resolve(granted);
        },
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(waiter), 1);
        reject(
          unavailable(
            `All ${readers} read connections stayed busy for ${acquireTimeoutMs} ms; try again shortly`,
            1,
            'Server busy',
          ),
        );
      }, acquireTimeoutMs);
      waiting.push(waiter);
    });
  };
  const release = (c: DuckDBConnection) => {
    const next = waiting.shift();
    if (next) next.grant(c);
    else idle.push(c);
  };

  // The reader this async call chain already holds. A read made while holding one (a query that
  // resolves names through a service, which reads too) runs on it: asking the pool for a second
  // connection would wait on itself once every connection is held that way, and hang for good.
  // Work started inside and outliving the holder (a background task) finds the lease ended and
  // takes a connection of its own.
  const held = new AsyncLocalStorage<{ connection: DuckDBConnection; ended: boolean }>();
  const withReader = async <T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T> => {
    const lease = held.getStore();
    if (lease && !lease.ended) return work(lease.connection);
    const c = await acquire();
    const mine = { connection: c, ended: false };
    try {
      return await held.run(mine, () => work(c));
    } finally {
      mine.ended = true;
      release(c);
    }
  };

  return {
    instance,
    writer,
    withReader,
    holdsReader: () => {
      const lease = held.getStore();
      return lease !== undefined && !lease.ended;
    },
    query: (sql, params) =>
      withReader(async (c) => {
        const reader = await c.runAndReadAll(sql, params);
        return reader.getRowObjectsJS() as JsRow[];
      }),
    close: async () => {
      for (const c of idle) c.closeSync();
      writer.closeSync();
      instance.closeSync();
    },
  };
};
