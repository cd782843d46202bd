/**
 * Every connection to the PostgreSQL log's database terminated while clients write and read (issue
 * 63): as a PostgreSQL restart, a failover or a firewall cutting idle connections leaves them.
 * Measured before: the process exited with code 1 ("terminating connection due to administrator
 * command … Emitted 'error' event on BoundPool instance", an idle pooled client of Emmett's pool,
 * which had no 'error' listener). Now: the process lives, every client is answered with success or a
 * retryable 503, nothing acknowledged is lost or stored twice, the read model reaches the log's head,
 * and the log's notifications come back on a fresh LISTEN connection. The real service, in a
 * process of its own, on a database of its own (the only one whose backends are terminated).
 */
import pg from 'pg';
import { call, killNow, startService, type Service } from '../support/service';
import { freshPostgresDatabase, POSTGRES_ADMIN_URL } from '../support/postgres';
import { byStatus, sleep, type Outcome } from './support';
import { untilTrue } from '../support/until';

jest.setTimeout(120_000);

const WRITERS = 8;
const READERS = 4;

describe('the PostgreSQL log losing every connection', () => {
  let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let admin: pg.Client;
  let service: Service | undefined;

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
  });
  afterAll(async () => {
    if (service) await killNow(service);
    await admin?.end();
    await db?.drop();
  });

  /** Terminates every backend connected to the log's database (ours only), and says how many. */
  const terminateAll = async () =>
    (
      await admin.query<{ n: string }>(
        `SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [db.name],
      )
    ).rows[0]!.n;

  const listening = async () =>
    (
      await admin.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN %'`,
        [db.name],
      )
    ).rows[0]!.n !== '0';

  it('given writers and readers running, when every connection to the log is terminated three times, then the process lives, nothing acknowledged is lost or doubled, and the read model and the notifications recover', async () => {
    service = await startService({ EVENT_STORE_URL: db.url, PROJECTION_POLL_MS: '1000' });
    const base = service.base;
    await untilTrue('the LISTEN connection', listening, { ms: 10_000 });

    const outcomes: Outcome[] = [];
    const reads: number[] = [];
    let stop = false;
    const writing = Array.from({ length: WRITERS }, async (_, k) => {
      for (let i = 0; !stop; i++) {
        const name = `pg_${k}_${i}`;
        const res = await fetch(`${base}/api/projects`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        }).catch(() => null);
        if (!res) {
          outcomes.push({ name, status: 0, detail: 'no answer', retryAfter: null });
          await sleep(100);
          continue;
        }
        const text = await res.text();
        const body = (text ? JSON.parse(text) : {}) as { detail?: string };
        outcomes.push({
          name,
          status: res.status,
          detail: body.detail ?? '',
          retryAfter: res.headers.get('retry-after'),
        });
        if (res.status >= 500) await sleep(50);
      }
    });
    const reading = Array.from({ length: READERS }, async () => {
      while (!stop) {
        const res = await fetch(`${base}/api/projects`).catch(() => null);
        reads.push(res?.status ?? 0);
        await res?.arrayBuffer();
        await sleep(20);
      }
    });

    const terminated: string[] = [];
    for (let round = 0; round < 3; round++) {
      await sleep(1_000);
      terminated.push(await terminateAll());
    }
    const lastCutAt = Date.now();
    await sleep(1_500);
    stop = true;
    await Promise.all([...writing, ...reading]);

    // What ended it, if it ended: the first lines of the crash.
    if (service.child.exitCode !== null) console.log(service.output().split('\n').slice(-60, -20).join('\n'));
    expect(service.child.exitCode).toBeNull();
    expect(service.output()).not.toMatch(/Emitted 'error' event|Uncaught|unhandled/i);

    // The read model reaches the log's head.
    await untilTrue(
      'the read model at the log head',
      async () => {
        const r = await call(base, 'GET', '/api/ready');
        const body = r.body as { position?: string; log_head?: string };
        return r.status === 200 && body.position === body.log_head;
      },
      { ms: 15_000 },
    );
    const convergedAfterMs = Date.now() - lastCutAt;
    // A fresh LISTEN connection: notifications are back, not left to polling.
    await untilTrue('a fresh LISTEN connection', listening, { ms: 15_000 });

    const log = new pg.Client({ connectionString: db.url });
    await log.connect();
    let inLog: Map<string, number>;
    try {
      const created = await log.query<{ name: string; n: string }>(
        `SELECT message_data->>'name' AS name, count(*)::text AS n FROM emt_messages
          WHERE message_type = 'ProjectCreated' GROUP BY 1`,
      );
      inLog = new Map(created.rows.map((r) => [r.name, Number(r.n)]));
    } finally {
      await log.end();
    }
    const listed = (await call(base, 'GET', '/api/projects')).body as { name: string }[];
    const visible = new Map<string, number>();
    for (const p of listed) visible.set(p.name, (visible.get(p.name) ?? 0) + 1);

    const acknowledged = outcomes.filter((o) => o.status === 201 || o.status === 202);
    const retryable = outcomes.filter((o) => o.status === 503);
    const lost = acknowledged.filter((o) => inLog.get(o.name) !== 1 || visible.get(o.name) !== 1);
    const duplicated =
      [...inLog].filter(([, n]) => n > 1).length + [...visible].filter(([, n]) => n > 1).length;
    console.log(
      `terminated ${terminated.join(' + ')} connections; writes ${JSON.stringify(byStatus(outcomes))}; ` +
        `reads ${JSON.stringify(byStatus(reads.map((status) => ({ name: '', status, detail: '', retryAfter: null }))))}; ` +
        `acknowledged ${acknowledged.length}, lost ${lost.length}, duplicated ${duplicated}; ` +
        `read model at the head ${convergedAfterMs} ms after the last cut`,
    );

    expect(terminated.every((n) => Number(n) > 0)).toBe(true);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(duplicated).toBe(0);
    // Success or retryable: never a 500, never a dropped request.
    for (const o of outcomes) expect([201, 202, 503]).toContain(o.status);
    for (const o of retryable) expect(Number(o.retryAfter)).toBeGreaterThanOrEqual(1);
    for (const status of reads) expect([200, 503]).toContain(status);
    // A refusal that says nothing was written is true of the log.
    for (const o of retryable)
      if (/^Nothing was written/.test(o.detail)) expect(inLog.has(o.name)).toBe(false);
  });
});
