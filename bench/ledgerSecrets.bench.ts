import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { openEventLog } from '../src/eventlog/open';
import type { EventLog, NewEvent } from '../src/eventlog/types';
import { FileDataKeyStore, loadOrCreateMasterKey, SecretVault } from '../src/ledger/shredding';
import { withSealedSecrets } from '../src/ledger/sealedLog';
import { systemClock } from '../src/shared/time';
import { fmt, percentile, ratio, tmpDir } from './support';

/** A database registration as the service records it: a password among its parameters. */
const databaseCreated = (i: number): NewEvent => ({
  type: 'DatabaseCreated',
  data: {
    name: `db_${i}`,
    engine: 'postgres',
    parameters: { host: 'db.example', port: 5432, user: 'app', password: `pw-${i}-secret`, database: 'shop' },
    createdAt: new Date().toISOString(),
  },
});

/** A change of that database's password: its resource has a data key already. */
const databaseUpdated = (i: number): NewEvent => ({
  type: 'DatabaseUpdated',
  data: {
    databaseId: i + 1,
    name: `db_${i}`,
    engine: 'postgres',
    parameters: {
      host: 'db.example',
      port: 5432,
      user: 'app',
      password: `pw-${i}-changed`,
      database: 'shop',
    },
    updatedAt: new Date().toISOString(),
  },
});

/** A project: no secret, the common write. */
const projectCreated = (i: number): NewEvent => ({
  type: 'ProjectCreated',
  data: { name: `p_${i}`, createdAt: new Date().toISOString() },
});

/** Appends one event per stream, one after another; answers appends per second. */
const appendRate = async (
  log: EventLog,
  count: number,
  make: (i: number) => NewEvent,
  tag: string,
  expectedVersion = 0n,
) => {
  const start = performance.now();
  for (let i = 0; i < count; i++) await log.append(`${tag}-${i}`, [make(i)], expectedVersion);
  return (count / (performance.now() - start)) * 1000;
};

/**
 * Write throughput with sealing on vs off (the same SQLite log file kind, the same events): the
 * sealed log finds or makes the resource's data key, encrypts the secrets, and opens them again
 * for the answer. Then AS OF: a query of a project's skills as of a past position vs the live table.
 */
export const benchLedgerSecrets = async (count = Number(process.env.BENCH_SEAL_EVENTS ?? 2000)) => {
  const rawDir = tmpDir('mindledger-bench-seal-raw-');
  const sealedDir = tmpDir('mindledger-bench-seal-on-');
  const raw = await openEventLog({ dataDir: rawDir, clock: systemClock });
  const stored = await openEventLog({ dataDir: sealedDir, clock: systemClock });
  const vault = new SecretVault(
    new FileDataKeyStore(path.join(sealedDir, 'keys')),
    loadOrCreateMasterKey(`file:${path.join(sealedDir, 'master-key')}`),
  );
  const sealed = withSealedSecrets(stored, vault);
  // Warm both (SQLite's first appends create its tables).
  await appendRate(raw, 50, projectCreated, 'warm');
  await appendRate(sealed, 50, projectCreated, 'warm');
  const rawSecrets = await appendRate(raw, count, databaseCreated, 'db');
  const sealedSecrets = await appendRate(sealed, count, databaseCreated, 'db');
  const rawUpdates = await appendRate(raw, count, databaseUpdated, 'db', 1n);
  const sealedUpdates = await appendRate(sealed, count, databaseUpdated, 'db', 1n);
  const rawPlain = await appendRate(raw, count, projectCreated, 'p');
  const sealedPlain = await appendRate(sealed, count, projectCreated, 'p');
  await raw.close();
  await sealed.close();
  console.log(
    `writes with sealing on vs off (SQLite, ${count} sequential appends each; goal ≥ 0.9×):\n` +
      `  a new resource with a secret (a database's password; its data key made and synced first): ${fmt(sealedSecrets)} vs ${fmt(rawSecrets)} appends/s = ${fmt(ratio(sealedSecrets, rawSecrets), 2)}×\n` +
      `  a change of a resource's secret (its data key exists): ${fmt(sealedUpdates)} vs ${fmt(rawUpdates)} appends/s = ${fmt(ratio(sealedUpdates, rawUpdates), 2)}×\n` +
      `  events without one (a project): ${fmt(sealedPlain)} vs ${fmt(rawPlain)} appends/s = ${fmt(ratio(sealedPlain, rawPlain), 2)}×`,
  );

  // AS OF vs the live table: 3,000 skills, half of them changed twice after the position asked.
  const dataDir = tmpDir('mindledger-bench-asof-');
  const app = await createApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
    logger: pino({ level: 'silent' }),
  });
  const sql = (query: string) => app.sql.execute(query, { db: 'mindsdb' }, {});
  // A whole write through the service (decide, seal, append, project, answer): a skill created
  // with an API key among its params vs one without, interleaved so both see the same conditions.
  await sql('CREATE PROJECT sealbench');
  const writes = Number(process.env.BENCH_SEAL_WRITES ?? 1000);
  const took = { secret: 0, plain: 0 };
  for (let i = 0; i < writes; i++)
    for (const kind of i % 2 === 0 ? (['secret', 'plain'] as const) : (['plain', 'secret'] as const)) {
      const start = performance.now();
      await app.services.skills.run('sealbench', {
        type: 'CreateSkill',
        data: {
          name: `${kind}${i}`,
          type: 'custom',
          params: kind === 'secret' ? { api_key: `sk-${i}-secret`, v: i } : { label: `sk-${i}-plain`, v: i },
        },
      });
      took[kind] += performance.now() - start;
    }
  const secretRate = (writes / took.secret) * 1000;
  const plainRate = (writes / took.plain) * 1000;
  console.log(
    `a create through the service (SQLite, ${writes} each, interleaved): a skill with an API key (sealed, new data key) ${fmt(secretRate)}/s vs one without ${fmt(plainRate)}/s = ${fmt(ratio(secretRate, plainRate), 2)}×`,
  );

  const skills = 3000;
  for (let i = 0; i < skills; i++)
    await app.services.skills.run('mindsdb', {
      type: 'CreateSkill',
      data: { name: `s${i}`, type: 'custom', params: { v: 0 } },
    });
  const middle = (await app.ctx.log.head()).position;
  for (let round = 1; round <= 2; round++)
    for (let i = 0; i < skills; i += 2)
      await app.services.skills.run('mindsdb', {
        type: 'PutSkill',
        data: { ref: `s${i}`, params: { v: round } },
      });
  let run = 0;
  // Every text differs (no cached answer or plan): the cost of a query the service has not seen.
  const timedQuery = async (asOf: string) => {
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const start = performance.now();
      const answer = await sql(
        `SELECT name, params FROM mindsdb.skills ${asOf} WHERE length(name) > ${-1 - run++}`,
      );
      if (answer.type !== 'table' || answer.data.length !== skills)
        throw new Error(`AS OF bench: unexpected answer ${JSON.stringify(answer).slice(0, 200)}`);
      times.push(performance.now() - start);
    }
    return percentile(times, 50);
  };
  await timedQuery('');
  const live = await timedQuery('');
  const past = await timedQuery(`FOR SYSTEM_TIME AS OF POSITION ${middle}`);
  await app.close();
  console.log(
    `AS OF query latency (${skills} skills, half changed twice since): as of a past position p50 ${fmt(past, 1)} ms vs the live table ${fmt(live, 1)} ms = ${fmt(ratio(past, live), 2)}×`,
  );
};
