/**
 * The PostgreSQL log restarted under a scaled-out deployment (issue 63): two processes of the real
 * service on one log, 16 writers and 16 readers spread over both, and PostgreSQL stopped (fast
 * shutdown: every backend terminated, new connections refused), left down for PG_OUTAGE_MS
 * (10 s by default), then started again. The server is a private cluster of this spec's own
 * (test/support/privatePostgres.ts): the machine's server on 5432 is everybody's and never stops.
 *
 * Then: neither process exited; every client was answered with success or a retryable 503 with
 * Retry-After; every acknowledged write is in the log exactly once; both read models reach the
 * log's head within seconds of PostgreSQL's return; and each process LISTENs again: with polling
 * set to 30 s, a write on one node is seen on the other within a few seconds only through NOTIFY.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPrivatePostgres, type PrivatePostgres } from '../support/privatePostgres';
import { call, killNow, startService, type Service } from '../support/service';
import { byStatus, sleep, type Outcome } from './support';
import { untilTrue } from '../support/until';

/** How long PostgreSQL stays down (ms); 10 s unless PG_OUTAGE_MS says otherwise. */
const OUTAGE_MS = Number(process.env.PG_OUTAGE_MS ?? 10_000);
/**
 * Writing after the start: long enough for a read model's retry, whose back-off reaches 5 s during
 * the outage (src/projection/failures.ts), to come round. (Stopping it a second after both nodes had
 * caught up and written again failed a CI run: both read models held all 308 events, yet each one's
 * cursor stood at 307 with the log's head at 308 for 30 s, by all appearances the last two having
 * committed out of position order, and no later write moved it; the stop-83 note has it.)
 */
const AFTER_MS = 6_000;
const WRITERS = 16;
const READERS = 16;
/** Polling slower than anything this spec waits for: only NOTIFY delivers another node's writes quickly. */
const POLL_MS = '30000';
/** How soon after PostgreSQL's return both read models must be at the log's head. */
const CONVERGE_WITHIN_MS = 30_000;
/** How soon a write on one node must be visible on the other (NOTIFY). */
const NOTIFIED_WITHIN_MS = 3_000;

jest.setTimeout(120_000 + OUTAGE_MS);

type Read = { node: number; url: string; status: number; retryAfter: string | null; at: number };
type Written = Outcome & { node: number; kind: 'project' | 'skill'; at: number };

describe('the PostgreSQL log restarting under two nodes', () => {
  let server: PrivatePostgres | undefined;
  let logUrl = '';
  const nodes: Service[] = [];
  const dataDirs: string[] = [];

  beforeAll(async () => {
    server = await startPrivatePostgres();
    logUrl = await server.createDatabase('mindledger');
    // Every process on one log wraps its data keys with one master key, as an operator configures it.
    const masterKey = crypto.randomBytes(32).toString('base64');
    const env = () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-restart-node-'));
      dataDirs.push(dir);
      return {
        DATA_DIR: dir,
        EVENT_STORE_URL: logUrl,
        PROJECTION_POLL_MS: POLL_MS,
        LEDGER_MASTER_KEY: masterKey,
        // Nothing in the background reads or appends to the log: no timer wakes a read model.
        LEDGER_CHECKPOINT_EVENTS: '1000000000',
        LEDGER_CHECKPOINT_MS: '86400000',
        LEDGER_CHECKPOINT_ON_STOP: 'false',
        JOBS_POLL_MS: '0',
        TRIGGERS_POLL_MS: '0',
      };
    };
    // One after the other: each migrates the schema, and the two cores compile TypeScript for each.
    nodes.push(await startService(env()));
    nodes.push(await startService(env()));
  }, 240_000);

  afterAll(async () => {
    for (const n of nodes) await killNow(n);
    await server?.remove();
    for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A statement on the private server, on a connection of its own (a restart ends every other). */
  const onServer = async <R extends pg.QueryResultRow>(sql: string, database = 'mindledger') => {
    const c = new pg.Client({ connectionString: server!.url(database) });
    c.on('error', () => undefined);
    await c.connect();
    try {
      return (await c.query<R>(sql)).rows;
    } finally {
      await c.end().catch(() => undefined);
    }
  };

  /** How many backends LISTEN on the log's database: one per node once each has its news connection. */
  const listeners = async () =>
    Number(
      (
        await onServer<{ n: string }>(
          `SELECT count(*)::text AS n FROM pg_stat_activity
            WHERE datname = 'mindledger' AND query ILIKE 'LISTEN %'`,
        )
      )[0]!.n,
    );

  /** GET /api/ready on a node, answered within 2 s (status 0: no answer). */
  const ready = async (node: Service) => {
    const res = await fetch(`${node.base}/api/ready`, { signal: AbortSignal.timeout(5_000) }).catch(
      () => null,
    );
    const body = ((await res?.json().catch(() => null)) ?? {}) as {
      position?: string;
      log_head?: string;
      detail?: string;
    };
    return {
      status: res?.status ?? 0,
      position: body.position,
      head: body.log_head,
      detail: body.detail ?? '',
    };
  };

  /** Polls until `check` holds and answers how long that took, or fails after `timeoutMs`. */
  const timeUntil = async (what: string, timeoutMs: number, check: () => Promise<boolean>) => {
    const from = Date.now();
    await untilTrue(what, check, { ms: timeoutMs });
    return Date.now() - from;
  };

  /** POSTs `body` to `url` on `node`; the outcome, or status 0 when nothing answered. */
  const post = async (node: Service, url: string, name: string, body: unknown): Promise<Outcome> => {
    try {
      const res = await fetch(`${node.base}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      let detail = '';
      try {
        detail = ((text ? JSON.parse(text) : {}) as { detail?: string }).detail ?? '';
      } catch {
        detail = text.slice(0, 200);
      }
      return { name, status: res.status, detail, retryAfter: res.headers.get('retry-after') };
    } catch (error) {
      // (Not `instanceof Error`: fetch's errors come from another realm than the spec's.)
      const e = error as { message?: string; cause?: { message?: string } };
      return {
        name,
        status: 0,
        detail: `no answer: ${e.message} ${e.cause?.message ?? ''}`,
        retryAfter: null,
      };
    }
  };

  it('given 16 writers and 16 readers on two nodes, when PostgreSQL stops for a while and starts again, then no process exits, every client is answered with success or a retryable 503, nothing acknowledged is lost or doubled, and both nodes catch up and listen again', async () => {
    const [a, b] = nodes as [Service, Service];
    await untilTrue('both nodes LISTENing', async () => (await listeners()) >= 2, { ms: 15_000 });
    // Skills go into one project's stream (contended: group commit, expected versions); projects
    // each into a stream of their own.
    expect((await post(a, '/api/projects', 'shared', { name: 'shared' })).status).toBe(201);
    await untilTrue(
      'the shared project on node B',
      async () => {
        const r = await call(b.base, 'GET', '/api/projects/shared');
        return r.status === 200;
      },
      { ms: 10_000 },
    );

    const written: Written[] = [];
    const reads: Read[] = [];
    let stop = false;
    const writing = Array.from({ length: WRITERS }, async (_, k) => {
      const node = k % 2;
      const kind = k < WRITERS / 2 ? 'project' : 'skill';
      for (let i = 0; !stop; i++) {
        const name = `w${k}_${i}`;
        const outcome =
          kind === 'project'
            ? await post(nodes[node]!, '/api/projects', name, { name })
            : await post(nodes[node]!, '/api/projects/shared/skills', name, {
                skill: { name, type: 'custom', params: {} },
              });
        written.push({ ...outcome, node, kind, at: Date.now() });
        // A client told to retry waits a little (not the whole Retry-After: the recovery is timed).
        if (outcome.status >= 500 || outcome.status === 0) await sleep(250);
      }
    });
    const reading = Array.from({ length: READERS }, async (_, k) => {
      const node = nodes[k % 2]!;
      const url = k % 4 < 2 ? '/api/projects' : '/api/projects/shared/skills';
      while (!stop) {
        const res = await fetch(`${node.base}${url}`, { signal: AbortSignal.timeout(30_000) }).catch(
          () => null,
        );
        reads.push({
          node: k % 2,
          url,
          status: res?.status ?? 0,
          retryAfter: res?.headers.get('retry-after') ?? null,
          at: Date.now(),
        });
        await res?.arrayBuffer().catch(() => undefined);
        await sleep(50);
      }
    });

    // PostgreSQL stops under load: once writes of both kinds are acknowledged on both nodes, and
    // reads answered on both.
    await untilTrue(
      'writes and reads answered on both nodes',
      async () =>
        [0, 1].every(
          (node) =>
            (['project', 'skill'] as const).every((kind) =>
              written.some((w) => w.node === node && w.kind === kind && w.status === 201),
            ) && reads.some((r) => r.node === node && r.status === 200),
        ),
      { ms: 30_000 },
    );
    const stoppedAt = Date.now();
    await server!.stop();
    const stopTookMs = Date.now() - stoppedAt;
    await sleep(OUTAGE_MS);
    await server!.start();
    const returnedAt = Date.now();
    // Each node's read model reaches the head the log had when PostgreSQL returned, while writes go on.
    const headAtReturn = BigInt(
      (await onServer<{ p: string | null }>(`SELECT max(global_position)::text AS p FROM emt_messages`))[0]!
        .p ?? '0',
    );
    const caughtUp = nodes.map(async (node) => {
      for (;;) {
        const r = await ready(node);
        if (r.status === 200 && BigInt(r.position ?? '0') >= headAtReturn) return Date.now() - returnedAt;
        if (Date.now() - returnedAt > CONVERGE_WITHIN_MS) return null;
        await sleep(100);
      }
    });
    await sleep(AFTER_MS);
    stop = true;
    await Promise.all([...writing, ...reading]);
    const caughtUpMs = await Promise.all(caughtUp);

    // What ended a node, if one ended: the last lines it wrote.
    for (const n of nodes)
      if (n.child.exitCode !== null || n.child.signalCode !== null)
        console.log(n.output().split('\n').slice(-60).join('\n'));
    for (const n of nodes) {
      expect(n.child.exitCode).toBeNull();
      expect(n.child.signalCode).toBeNull();
      expect(n.output()).not.toMatch(/Emitted 'error' event|Uncaught|unhandled/i);
    }

    // Both read models at the log's head (nothing is written any more: one head for both).
    await untilTrue(
      'both read models at the log head',
      async () => {
        const [ra, rb] = await Promise.all(nodes.map(ready));
        return (
          ra!.status === 200 && rb!.status === 200 && ra!.position === ra!.head && rb!.position === rb!.head
        );
      },
      {
        ms: CONVERGE_WITHIN_MS,
        explain: async () =>
          `ready ${JSON.stringify(await Promise.all(nodes.map(ready)))}; read models ${JSON.stringify(
            await Promise.all(
              nodes.map(async (n) =>
                fetch(`${n.base}/api/status`, { signal: AbortSignal.timeout(5_000) })
                  .then(async (r) => ((await r.json()) as { read_model?: unknown }).read_model)
                  .catch((error: Error) => error.message),
              ),
            ),
          )}; PostgreSQL's log: ${server!.serverLog().split('\n').slice(-6).join(' | ')}; node A's last log lines: ${nodes[0]!
            .output()
            .split('\n')
            .slice(-8)
            .join(' | ')}`,
      },
    );
    const convergedMs = Date.now() - returnedAt;

    // Each node LISTENs again on a fresh connection (every connection before the stop is gone)...
    await untilTrue('both nodes LISTENing again', async () => (await listeners()) >= 2, { ms: 15_000 });
    for (const n of nodes) {
      expect(n.output()).toMatch(/log notifications lost/);
      expect(n.output()).toMatch(/log notifications back: listening again/);
    }
    // ...and NOTIFY delivers: a write on one node is read on the other long before the next poll.
    const notified: number[] = [];
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const name = `notified_${notified.length}`;
      expect((await post(from, '/api/projects', name, { name })).status).toBe(201);
      notified.push(
        await timeUntil(`${name} on the other node`, NOTIFIED_WITHIN_MS, async () => {
          const r = await call(to.base, 'GET', `/api/projects/${name}`);
          return r.status === 200;
        }),
      );
    }

    // The log, read on the server: each acknowledged write once, none twice.
    const inLog = new Map<string, number>();
    for (const row of await onServer<{ kind: string; name: string; n: string }>(
      `SELECT message_type AS kind, message_data->>'name' AS name, count(*)::text AS n FROM emt_messages
        WHERE message_type IN ('ProjectCreated', 'SkillCreated') GROUP BY 1, 2`,
    ))
      inLog.set(`${row.kind === 'ProjectCreated' ? 'project' : 'skill'}:${row.name}`, Number(row.n));
    // And each node's read model: every acknowledged write visible, once.
    const visible = await Promise.all(
      nodes.map(async (node) => {
        const seen = new Map<string, number>();
        const projects = (await call(node.base, 'GET', '/api/projects')).body as { name: string }[];
        const skills = (await call(node.base, 'GET', '/api/projects/shared/skills')).body as {
          name: string;
        }[];
        for (const p of projects) seen.set(`project:${p.name}`, (seen.get(`project:${p.name}`) ?? 0) + 1);
        for (const s of skills) seen.set(`skill:${s.name}`, (seen.get(`skill:${s.name}`) ?? 0) + 1);
        return seen;
      }),
    );

    const key = (w: Written) => `${w.kind}:${w.name}`;
    const acknowledged = written.filter((w) => w.status === 201 || w.status === 202);
    const refused = written.filter((w) => w.status === 503);
    const lost = acknowledged.filter(
      (w) => inLog.get(key(w)) !== 1 || visible.some((seen) => seen.get(key(w)) !== 1),
    );
    const duplicated = [
      ...[...inLog].filter(([, n]) => n > 1).map(([k]) => `log ${k}`),
      ...visible.flatMap((seen, i) => [...seen].filter(([, n]) => n > 1).map(([k]) => `node ${i} ${k}`)),
    ];
    const otherWrites = written.filter((w) => ![201, 202, 503].includes(w.status));
    const otherReads = reads.filter((r) => ![200, 503].includes(r.status));
    const withoutRetryAfter = [
      ...refused.filter((w) => !(Number(w.retryAfter) >= 1)),
      ...reads.filter((r) => r.status === 503 && !(Number(r.retryAfter) >= 1)),
    ];
    // Said to have written nothing: true of the log.
    const falselyRefused = refused.filter((w) => /^Nothing was written/.test(w.detail) && inLog.has(key(w)));

    // Per node: first write acknowledged after the return, the read model retrying, LISTEN back.
    const afterReturn = (node: number, pattern: RegExp) => {
      for (const line of nodes[node]!.output().split('\n')) {
        if (!pattern.test(line)) continue;
        const time = (JSON.parse(line) as { time?: number }).time;
        if (time !== undefined && time > returnedAt) return time - returnedAt;
      }
      return null;
    };
    const perNode = [0, 1].map((node) => {
      const first = written.find((w) => w.node === node && w.at > returnedAt && w.status === 201);
      return {
        resumed: first ? first.at - returnedAt : null,
        readModelRetried: afterReturn(node, /"projection recovered"/),
        listening: afterReturn(node, /log notifications back/),
        caughtUp: caughtUpMs[node],
      };
    });
    // Why writes were refused, by phase: while PostgreSQL was down, and after it returned.
    const reasons: Record<string, number> = {};
    for (const w of refused) {
      const phase = w.at < returnedAt ? 'down' : 'after the return';
      const why = w.detail
        .replace(/connect ECONNREFUSED [\d.:]+/, 'connect ECONNREFUSED')
        .replace(/ Retry shortly\.$/, '');
      reasons[`${phase}: ${why}`] = (reasons[`${phase}: ${why}`] ?? 0) + 1;
    }

    const refusedReads: Record<string, number> = {};
    for (const r of reads.filter((r) => r.status === 503)) {
      const where = `${r.at < returnedAt ? 'down' : 'after the return'} ${r.url}`;
      refusedReads[where] = (refusedReads[where] ?? 0) + 1;
    }

    console.log(
      [
        `PostgreSQL stopped (fast, ${stopTookMs} ms) for ${OUTAGE_MS} ms under ${WRITERS} writers and ${READERS} readers on two nodes`,
        `writes ${JSON.stringify(byStatus(written))}; reads ${JSON.stringify(byStatus(reads.map((r) => ({ ...r, name: '', detail: '' }))))}`,
        `acknowledged ${acknowledged.length}, lost ${lost.length}, duplicated ${duplicated.length}, refused (503) ${refused.length}`,
        ...Object.entries(reasons).map(([why, n]) => `  refused ${n}× ${why}`),
        `reads refused (503): ${JSON.stringify(refusedReads)}`,
        ...perNode.map(
          (p, i) =>
            `node ${'AB'[i]}, ms after PostgreSQL returned: LISTEN again ${p.listening}, read model retried ${p.readModelRetried}, ` +
            `first write acknowledged ${p.resumed}, read model at the head of the return ${p.caughtUp}`,
        ),
        `both read models at the log's head ${convergedMs} ms after the return (writing went on ${AFTER_MS} ms of it)`,
        `a write seen on the other node through NOTIFY: A→B ${notified[0]} ms, B→A ${notified[1]} ms (polling every ${POLL_MS} ms)`,
      ].join('\n'),
    );
    if (otherWrites.length || otherReads.length)
      console.log(
        'other answers',
        JSON.stringify({ writes: otherWrites.slice(0, 20), reads: otherReads.slice(0, 20) }),
      );

    expect(acknowledged.filter((w) => w.at < stoppedAt).length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(otherWrites).toEqual([]);
    expect(otherReads).toEqual([]);
    expect(withoutRetryAfter).toEqual([]);
    expect(falselyRefused).toEqual([]);
    // Writes resume and each read model reaches what the log held at the return, on both nodes.
    for (const p of perNode) {
      expect(p.resumed).not.toBeNull();
      expect(p.caughtUp).not.toBeNull();
    }
  });
});
