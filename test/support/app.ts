import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import supertest from 'supertest';
import { createApp, type RunningApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { keepIdleConnections } from '../../src/http/idleConnections';
import type { ReadCeiling } from '../../src/integrations/drivers';
import type { Clock } from '../../src/shared/time';
import { freshPostgresDatabase } from './postgres';

export type StoreKind = 'sqlite' | 'postgres';
export const storeKinds: StoreKind[] = ['sqlite', 'postgres'];

export type TestApp = {
  running: RunningApp;
  http: ReturnType<typeof supertest>;
  /** The app's listening server (the one `http` sends to), for a client of its own (fetch). */
  url: string;
  config: Config;
  /** Closes the app, keeping its data (for restart tests). */
  stop: () => Promise<void>;
  /** Starts a new app on the same log and data directory. */
  restart: (overrides?: Record<string, string>) => Promise<TestApp>;
  /** Closes everything and removes the data. */
  dispose: () => Promise<void>;
};

type Backing = { env: Record<string, string>; dataDir: string; cleanup: () => Promise<void> };

const backing = async (kind: StoreKind): Promise<Backing> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-test-'));
  if (kind === 'sqlite') {
    return {
      env: { DATA_DIR: dataDir },
      dataDir,
      cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const db = await freshPostgresDatabase();
  return {
    env: { DATA_DIR: dataDir, EVENT_STORE_URL: db.url, PROJECTION_POLL_MS: '50' },
    dataDir,
    cleanup: async () => {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/**
 * The ledger signs checkpoints (events of their own) on a timer and at a clean stop; specs that count
 * events or compare the log across a restart would see them appear. Off unless a spec turns it on
 * (test/ledger/integration.spec.ts does).
 */
const QUIET_LEDGER = {
  LEDGER_CHECKPOINT_EVENTS: '1000000000',
  LEDGER_CHECKPOINT_MS: '86400000',
  LEDGER_CHECKPOINT_ON_STOP: 'false',
};

/**
 * The job scheduler fires due jobs on a timer, appending runs in the background; specs that compare
 * the log or the read model at two moments would see them appear. Off: a spec fires due jobs with
 * `running.jobs.tick()` (test/jobs does).
 */
const QUIET_JOBS = { JOBS_POLL_MS: '0', TRIGGERS_POLL_MS: '0' };

/**
 * The suite's fakes (OpenAI, Slack, Telegram, webhook receivers, file servers) listen on loopback,
 * which the outbound policy refuses by default: allowed here. A spec about the policy overrides it.
 */
const LOCAL_OUTBOUND = { OUTBOUND_ALLOW: '127.0.0.0/8,::1' };

/**
 * DuckDB makes a thread per core for every instance and hands a query's pipelines to them. A spec's
 * tables are far smaller than one row group (122,880 rows), so a scan is one task whatever the
 * threads, and the extra thread only adds its start and the hand-offs between threads: three of the
 * slowest spec files (rebuild, sql-differential, as-of) took 12% less CPU with one (73.7 s against
 * 83.9). A spec about parallel work sets its own.
 */
const ONE_DUCKDB_THREAD = { DUCKDB_THREADS: '1' };

/**
 * SQL_MAX_PROCESS_MEMORY bounds the resident memory of the process an app runs in; in production
 * that is one app, here a jest worker that has run other spec files (and holds what jest keeps of
 * them). Unless a spec sets it, the bound counts from what the worker holds when the app starts.
 */
const processMemoryFromNow = (settings: Record<string, string>) => {
  if (settings.SQL_MAX_PROCESS_MEMORY !== undefined) return {};
  const bound = loadConfig(settings).sqlMaxProcessMemory;
  // 0: no watch.
  return bound > 0 ? { SQL_MAX_PROCESS_MEMORY: `${bound + process.memoryUsage().rss}B` } : {};
};

/**
 * `clock`: the app's clock (a spec moving time by hand); `externalReads`: what one read from an
 * external database may bring (a spec about that bound shrinks it).
 */
type StartOptions = { logStream?: NodeJS.WritableStream; clock?: Clock; externalReads?: ReadCeiling };

const start = async (
  b: Backing,
  overrides: Record<string, string>,
  options: StartOptions = {},
): Promise<TestApp> => {
  const { logStream, clock, externalReads } = options;
  const settings = {
    LOG_LEVEL: 'silent',
    ...QUIET_LEDGER,
    ...QUIET_JOBS,
    ...LOCAL_OUTBOUND,
    ...ONE_DUCKDB_THREAD,
    ...b.env,
    ...overrides,
  };
  const config = loadConfig({ ...settings, ...processMemoryFromNow(settings) });
  const logger = logStream ? pino({ level: 'info' }, logStream) : pino({ level: 'silent' });
  const running = await createApp(config, {
    logger,
    ...(clock ? { clock } : {}),
    ...(externalReads ? { externalReads } : {}),
  });
  // One listening server for the app's life: given the app itself, supertest makes a server and
  // binds a port for every request, and the kernel's search for a free port grew to 4% of a busy
  // spec's time.
  // Kept-alive connections as the service keeps them (`npm start`).
  const server = keepIdleConnections(http.createServer(running.app));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
  } catch (error) {
    await running.close();
    throw error;
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await running.close();
  };
  return {
    running,
    http: supertest(server),
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    config,
    stop,
    restart: async (more = {}) => {
      await stop();
      return start(b, { ...overrides, ...more }, options);
    },
    dispose: async () => {
      if (!stopped) await skipCheckpointOnClose(running);
      await stop();
      await b.cleanup();
    },
  };
};

/**
 * DuckDB writes what its log holds into the database file when it closes: about 150 ms of the
 * closing thread for the read model's tables on a slow machine, paid by every spec's every app.
 * A disposed app's files are removed right after, so nothing would read that write. (A stopped app
 * keeps the checkpoint: restart specs reopen its file as the service would.)
 */
const skipCheckpointOnClose = (running: RunningApp) =>
  // Best effort: a read model that failed, or readers all held by a spec's stuck queries, close as before.
  Promise.race([
    running.ctx.duck.withReader((c) => c.run('PRAGMA disable_checkpoint_on_shutdown')).catch(() => undefined),
    sleep(1_000, undefined, { ref: false }),
  ]);

/** A running app on a fresh SQLite file or a fresh PostgreSQL database, with its own DuckDB. */
export const startTestApp = async (
  kind: StoreKind,
  overrides: Record<string, string> = {},
  options: StartOptions = {},
): Promise<TestApp> => {
  const b = await backing(kind);
  try {
    return await start(b, overrides, options);
  } catch (error) {
    // An app that refuses to start (a spec about a bad setting) leaves no database or files behind.
    await b.cleanup();
    throw error;
  }
};

/**
 * Starts `count` apps on one shared PostgreSQL log, each with its own data directory and DuckDB;
 * `env` overrides settings of every node (e.g. PROJECTION_POLL_MS).
 */
export const startPostgresCluster = async (
  count: number,
  options: { together?: boolean; env?: Record<string, string>; clock?: Clock } = {},
) => {
  const db = await freshPostgresDatabase();
  // Every process on one log wraps its data keys with one master key, as an operator configures it.
  const masterKey = crypto.randomBytes(32).toString('base64');
  const startNode = () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-node-'));
    return start(
      {
        env: {
          DATA_DIR: dataDir,
          EVENT_STORE_URL: db.url,
          PROJECTION_POLL_MS: '50',
          LEDGER_MASTER_KEY: masterKey,
        },
        dataDir,
        cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
      },
      options.env ?? {},
      options.clock ? { clock: options.clock } : {},
    );
  };
  const apps: TestApp[] = [];
  if (options.together) {
    // All at once, as processes behind a load balancer start: each creates the schema it needs.
    const settled = await Promise.allSettled(Array.from({ length: count }, startNode));
    for (const s of settled) if (s.status === 'fulfilled') apps.push(s.value);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) {
      for (const a of apps) await a.dispose();
      await db.drop();
      throw failed.reason;
    }
  } else for (let i = 0; i < count; i++) apps.push(await startNode());
  return {
    apps,
    dispose: async () => {
      for (const a of apps) await a.dispose();
      await db.drop();
    },
  };
};

const HTTP_VERBS = new Set(['get', 'post', 'put', 'patch', 'delete', 'del', 'head', 'options']);

/**
 * `http` whose requests go through `agent` (an HTTP keep-alive agent), as a client sending many
 * requests in a row does. supertest otherwise opens a connection per request: about 0.4 ms of CPU
 * each, a third of what a cached SQL answer costs in all, which a spec sending thousands pays in
 * seconds. The same app and routes; only the client's connections differ.
 */
export const keptAlive = (client: TestApp['http'], agent: http.Agent): TestApp['http'] =>
  new Proxy(client, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof name !== 'string' || !HTTP_VERBS.has(name) || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => supertest.Test).apply(target, args).agent(agent);
    },
  });

/**
 * `t` whose requests reuse its connections (`keptAlive`, at most `maxSockets` at once). Its `stop`
 * and `dispose` close the agent's sockets too (`restart` answers an app without one).
 */
export const keepingAlive = (t: TestApp, maxSockets = 4): TestApp => {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const closing =
    <A extends unknown[]>(close: (...a: A) => Promise<void>) =>
    async (...a: A) => {
      try {
        await close(...a);
      } finally {
        agent.destroy();
      }
    };
  return { ...t, http: keptAlive(t.http, agent), stop: closing(t.stop), dispose: closing(t.dispose) };
};

/** The SQL endpoint's answer, loosely typed: the tests assert on its fields. */
export type SqlAnswer = {
  type: 'table' | 'ok' | 'error';
  column_names?: string[];
  column_types?: string[];
  data?: unknown[][];
  truncated?: true;
  error_code?: number;
  error_message?: string;
  context: Record<string, unknown>;
};

/** POST /api/sql/query, which answers 200 whatever the outcome (errors are in the body). */
export const querySql = async (
  t: TestApp,
  query: string,
  extra: { context?: Record<string, unknown>; params?: Record<string, unknown> } = {},
) =>
  (
    await t.http
      .post('/api/sql/query')
      .send({ query, ...extra })
      .expect(200)
  ).body as SqlAnswer;

export const problemOf = (res: { headers: Record<string, string>; body: unknown }) => {
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  return res.body as { title: string; detail: string; status: number };
};
