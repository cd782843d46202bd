/**
 * What ledger specs do to a log from outside the service: run `npm run verify`'s program on it, and
 * run SQL on its store as someone with access to the database file or server would.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { openEventLog } from '../../src/eventlog/open';
import { systemClock } from '../../src/shared/time';
import { startTestApp, type StoreKind, type TestApp } from '../support/app';
import { until } from '../support/until';
import { givenProject } from '../support/world';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

/**
 * `npm run verify`'s program as compiled JavaScript, as `npm run verify` runs it from dist/: built
 * once per spec file by esbuild from src/cli/verify.ts and what it imports (packages stay required
 * from node_modules, as dist/ requires them), so no tsc build is needed. Through tsx instead, each
 * run resolved and loaded the CLI's modules through tsx's hooks with a cold cache (each jest run has
 * a fresh TMPDIR): 0.65-0.95 s a run against about 0.35 s for the bundle
 * (test/promise/replay-check.spec.ts builds the replay CLI the same way).
 */
let cliDir: string | undefined;
let building: Promise<string> | undefined;
const builtCli = () =>
  (building ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-verify-cli-'));
    cliDir = dir;
    await build({
      entryPoints: [path.join(ROOT, 'src', 'cli', 'verify.ts')],
      outfile: path.join(dir, 'verify.js'),
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'silent',
    });
    return path.join(dir, 'verify.js');
  })());
afterAll(() => {
  if (cliDir) fs.rmSync(cliDir, { recursive: true, force: true });
});

/**
 * Runs `npm run verify`'s program on the app's log (compiled from source, as the built one is).
 * `stdout` holds the verdict (and, when it fails, what it wrote to stderr too); `stderr` what it
 * wrote there.
 */
export const verifyCli = async (t: TestApp, args: string[] = [], env: Record<string, string> = {}) => {
  const all = {
    ...process.env,
    DATA_DIR: t.config.dataDir,
    ...(t.config.eventStoreUrl ? { EVENT_STORE_URL: t.config.eventStoreUrl } : {}),
    LOG_LEVEL: 'silent',
    // The bundle lives outside the checkout: its packages are the checkout's.
    NODE_PATH: path.join(ROOT, 'node_modules'),
    ...env,
  };
  try {
    const program = [await builtCli(), ...args];
    const { stdout, stderr } = await run(process.execPath, program, { env: all });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout + e.stderr, stderr: e.stderr };
  }
};

/** SQL on the log's own store, as someone with access to the database file or server would run it. */
export const onLogStore = async (store: StoreKind, t: TestApp, sql: string) => {
  if (store === 'postgres') {
    const client = new pg.Client({ connectionString: t.config.eventStoreUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new sqlite3.Database(path.join(t.config.dataDir, 'events.sqlite'));
  await new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
  await new Promise<void>((resolve) => db.close(() => resolve()));
};

/** Every event of a stopped app's log, in order: type, position, stream and data. */
export const loggedEvents = async (t: TestApp) => {
  const log = await openEventLog({
    url: t.config.eventStoreUrl,
    dataDir: t.config.dataDir,
    clock: systemClock,
  });
  try {
    const all: { type: string; position: bigint; stream: string; data: unknown }[] = [];
    let cursor = { position: 0n, transactionId: null as string | null };
    for (;;) {
      const page = await log.readAll(cursor, 1000);
      if (page.events.length === 0) return all;
      for (const e of page.events)
        all.push({ type: e.type, position: e.meta.position, stream: e.meta.stream, data: e.data });
      cursor = page.cursor;
    }
  } finally {
    await log.close();
  }
};

/**
 * An app that signs a checkpoint as soon as one event is unsigned (ticks every 100 ms, and at a
 * clean stop), logging to `logStream`: for the specs about what the signer does on a changed log.
 */
export const signingApp = (store: StoreKind, logStream: NodeJS.WritableStream) =>
  startTestApp(
    store,
    { LEDGER_CHECKPOINT_EVENTS: '1', LEDGER_CHECKPOINT_MS: '100', LEDGER_CHECKPOINT_ON_STOP: 'true' },
    { logStream },
  );

/**
 * Given a restarted signing app on a changed log: an event to sign (the timer's next tick finds a
 * checkpoint due and meets the change), then, once `refused` is logged, a tick and a forced signing
 * after it (as the timer and the stop ask) sign nothing, and `verify` reports `problem`.
 */
export const expectSigningRefused = async (
  t: TestApp,
  logged: () => readonly { msg: string }[],
  refused: RegExp,
  problem: string,
) => {
  await givenProject(t);
  await until(`the signer to log ${refused}`, async () =>
    logged().some((l) => refused.test(l.msg)) ? true : undefined,
  );
  const ledger = t.running.services.ledger;
  await expect(ledger.checkpoint()).resolves.toBeNull();
  await expect(ledger.checkpoint(true)).resolves.toBeNull();
  const online = (await t.http.get('/api/audit/verify').expect(200)).body as unknown;
  expect(online).toMatchObject({ ok: false, problem });
};
