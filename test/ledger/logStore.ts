/**
 * What ledger specs do to a log from outside the service: run `npm run verify`'s program on it, and
 * run SQL on its store as someone with access to the database file or server would.
 */
import path from 'node:path';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { openEventLog } from '../../src/eventlog/open';
import { systemClock } from '../../src/shared/time';
import { startTestApp, type StoreKind, type TestApp } from '../support/app';
import { until } from '../support/until';
import { givenProject } from '../support/world';
import { runCli } from '../support/bundled';

/**
 * Runs `npm run verify`'s program on the app's log (compiled from source, as the built one is:
 * test/support/bundled.ts). `stdout` holds the verdict (and, when it fails, what it wrote to
 * stderr too); `stderr` what it wrote there.
 */
export const verifyCli = async (t: TestApp, args: string[] = [], env: Record<string, string> = {}) => {
  const { code, stdout, stderr } = await runCli('src/cli/verify.ts', args, {
    DATA_DIR: t.config.dataDir,
    ...(t.config.eventStoreUrl ? { EVENT_STORE_URL: t.config.eventStoreUrl } : {}),
    LOG_LEVEL: 'silent',
    ...env,
  });
  return { code, stdout: code === 0 ? stdout : stdout + stderr, stderr };
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
