import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type MysqlServer, type MysqlServerOptions, type SqlEngine } from '../../src/mysql';
import { startTestApp, type StoreKind, type TestApp } from '../support/app';

/** One call the server made to the engine, with the signal it passed. */
export type EngineCall = { query: string; params: Record<string, unknown>; signal: AbortSignal | undefined };

export type Front = {
  app: TestApp;
  server: MysqlServer;
  port: number;
  /** Every statement the server sent the engine, in order. */
  calls: EngineCall[];
  connect(options?: mysql.ConnectionOptions): Promise<mysql.Connection>;
  /** The `mysql` command-line client (MariaDB's) against the server, in batch mode. */
  cli(sql: string, args?: string[]): Promise<CliResult>;
  dispose(): Promise<void>;
};

export type CliResult = { code: number; stdout: string; stderr: string };

/** The real app's SQL service, adapted to the server's port as the composition root does (results streamed). */
export const appEngine = (app: TestApp, calls: EngineCall[] = []): SqlEngine => ({
  execute: (query, context, params, signal) => {
    calls.push({ query, params, signal });
    return app.running.sql.execute(query, context, params, signal);
  },
  stream: (query, context, params, signal) => {
    calls.push({ query, params, signal });
    return app.running.sql.stream(query, context, params, signal);
  },
});

/** A running app (fresh store) with the MySQL server in front of its SQL engine, on a free port. */
export const startFront = async (
  o: {
    kind?: StoreKind;
    env?: Record<string, string>;
    server?: Partial<MysqlServerOptions>;
    /** Wraps the app's engine (a streaming variant, …). */
    engine?: (base: SqlEngine) => SqlEngine;
  } = {},
): Promise<Front> => {
  const app = await startTestApp(o.kind ?? 'sqlite', o.env ?? {});
  const calls: EngineCall[] = [];
  const base = appEngine(app, calls);
  const server = await startMysqlServer({
    engine: o.engine ? o.engine(base) : base,
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
    ...o.server,
  });
  const opened: mysql.Connection[] = [];
  return {
    app,
    server,
    port: server.port,
    calls,
    connect: async (options = {}) => {
      const c = await mysql.createConnection({
        host: '127.0.0.1',
        port: server.port,
        user: 'analyst',
        ...options,
      });
      opened.push(c);
      return c;
    },
    cli: (sql, args = []) => runCli(server.port, sql, args),
    dispose: async () => {
      for (const c of opened) c.destroy();
      await server.close(0);
      await app.dispose();
    },
  };
};

export const runCli = (port: number, sql: string, args: string[] = []): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      'mysql',
      ['-h', '127.0.0.1', '-P', String(port), '-u', 'analyst', '--batch', ...args, '-e', sql],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });

/** Tab-separated lines of the CLI's batch output. */
export const lines = (stdout: string) =>
  stdout
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => l.split('\t'));

/** A self-signed certificate and key for localhost and 127.0.0.1, made with the openssl CLI in a scratch directory. */
export const selfSignedCertificate = (): Promise<{ cert: string; key: string; dir: string }> =>
  new Promise((resolve, reject) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-mysql-tls-'));
    execFile(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      (error) => {
        if (error) reject(error);
        else
          resolve({
            cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
            key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'),
            dir,
          });
      },
    );
  });

/** Resolves when `signal` is aborted (at once if it is already). */
export const aborted = (signal: AbortSignal) =>
  new Promise<unknown>((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });

/** Resolves once `predicate` holds, checking after each turn of the event loop. */
export const eventually = async (predicate: () => boolean) => {
  while (!predicate()) await new Promise((r) => setTimeout(r, 10));
};

/** A query DuckDB works on for hours unless interrupted (and which no cache answers). */
export const endlessQuery = (tag: string) =>
  `SELECT sum(i * 2) AS s, '${tag}' AS tag FROM range(1000000000000::BIGINT) t(i)`;
