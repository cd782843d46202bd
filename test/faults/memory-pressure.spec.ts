/**
 * Memory pressure (issue 63): the real service in a process of its own, with a small Node heap
 * (`--max-old-space-size=256`) and `DUCKDB_MEMORY_LIMIT=256MB`, while four clients keep writing and
 * reading, is sent queries made to exhaust its memory: aggregates of 50,000,000 rows into one value
 * (string_agg, list), a cross join of millions of wide rows (the row and answer-size limits), a
 * JSON answer of hundreds of MB in one value, alone and several at once.
 *
 * Then: every heavy query is answered (an error body, or a table cut at the limits), never a
 * dropped connection; the process never exits (no `heap out of memory`, no `FATAL ERROR`); every
 * write is acknowledged or refused with a retryable 503, and every acknowledged one is read back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, killNow, type Service } from '../support/service';
import { byStatus, expectLivedOn, sleep, startSmallHeapService, type Outcome } from './support';

jest.setTimeout(150_000);

const CLIENTS = 4;
const HEAP_MB = 256;

type Answer = {
  type?: string;
  error_code?: number;
  error_message?: string;
  data?: unknown[][];
  truncated?: boolean;
};
type Heavy = { name: string; ms: number; status: number; answer: Answer | null; failure?: string };

/** The queries made to take more memory than the process has. */
const HEAVY: readonly (readonly [string, string])[] = [
  // One value of 5 GB of text, growing in the aggregate's state (not spillable).
  ['string_agg', "SELECT length(string_agg(repeat('x', 100), '')) AS n FROM range(50000000)"],
  // One list of 50,000,000 numbers (400 MB) in the aggregate's state.
  ['list', 'SELECT len(list(range)) AS n FROM range(50000000)'],
  // 25,000,000 rows of 1,000 characters: the row cap and SQL_MAX_ANSWER_BYTES cut it.
  [
    'cross join',
    "SELECT a.range AS a, b.range AS b, repeat('w', 1000) || a.range AS s FROM range(5000) a, range(5000) b",
  ],
  // One JSON value of about 200 MB: larger than the answer may be, made before it is measured.
  ['json', "SELECT json_group_array(repeat('j', 100) || range) AS j FROM range(2000000)"],
  // One JSON value of a list of 20,000,000 numbers.
  ['to_json', 'SELECT to_json(list(range)) AS j FROM range(20000000)'],
];

/**
 * Answers DuckDB streams holding little (10,000,000 rows of 2,000 characters): what they take is the
 * Node heap's, SQL_MAX_ANSWER_BYTES (64 MiB) each; several at once are more than the heap.
 */
const WIDE = "SELECT range AS n, repeat('v', 2000) || range AS s FROM range(10000000)";
const WIDE_AT_ONCE = 12;

/** Resident memory of a process now and at its peak (kB → MiB), from /proc. */
const residentOf = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kb('VmRSS') / 1024), peakMiB: Math.round(kb('VmHWM') / 1024) };
};

const sqlQuery = async (base: string, query: string, timeoutMs = 90_000) => {
  const res = await fetch(`${base}/api/sql/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, answer: JSON.parse(await res.text()) as Answer };
};

describe('memory pressure on a real process', () => {
  let service: Service;
  let dataDir = '';

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-pressure-'));
    service = await startSmallHeapService(dataDir, HEAP_MB, { SQL_TIMEOUT_MS: '30000' });
  }, 120_000);

  afterAll(async () => {
    if (service) await killNow(service);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('given 4 clients writing and reading, when queries that cannot fit are sent, then each is refused (or cut) with an answer, the process lives on, and no acknowledged write is lost', async () => {
    const { base } = service;
    const pid = service.child.pid!;
    let peakMiB = 0;
    const sampler = setInterval(() => {
      try {
        peakMiB = Math.max(peakMiB, residentOf(pid).peakMiB);
      } catch {
        // gone: the checks below say so
      }
    }, 200);

    // Four clients: a project each round, then a read of the projects and a small SQL query.
    const writes: Outcome[] = [];
    const reads: { what: string; status: number; ok: boolean; detail?: string }[] = [];
    let stop = false;
    const clients = Array.from({ length: CLIENTS }, async (_, k) => {
      for (let i = 0; !stop; i++) {
        const name = `mem_${k}_${i}`;
        const w = await fetch(`${base}/api/projects`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
          signal: AbortSignal.timeout(30_000),
        }).then(
          async (res) => ({
            name,
            status: res.status,
            detail: ((await res.json().catch(() => ({}))) as { detail?: string }).detail ?? '',
            retryAfter: res.headers.get('retry-after'),
          }),
          (error: Error) => ({ name, status: 0, detail: error.message, retryAfter: null }),
        );
        writes.push(w);
        if (w.status >= 500 || w.status === 0) await sleep(100);
        const list = await fetch(`${base}/api/projects`, { signal: AbortSignal.timeout(30_000) }).then(
          async (r) => ({ status: r.status, ok: r.ok, detail: r.ok ? undefined : await r.text() }),
          (error: Error) => ({ status: 0, ok: false, detail: error.message }),
        );
        reads.push({ what: 'GET /api/projects', ...list });
        const q = await sqlQuery(base, `SELECT ${i} + ${k} AS n`, 30_000).then(
          (r) => {
            const ok = r.answer.type === 'table' && r.answer.data?.[0]?.[0] === i + k;
            return { status: r.status, ok, detail: ok ? undefined : JSON.stringify(r.answer) };
          },
          (error: Error) => ({ status: 0, ok: false, detail: error.message }),
        );
        reads.push({ what: 'SQL', ...q });
      }
    });

    const heavy: Heavy[] = [];
    const runHeavy = async (name: string, query: string) => {
      const started = Date.now();
      const r = await sqlQuery(base, query).then(
        (a) => ({ status: a.status, answer: a.answer }),
        (error: Error) => ({ status: 0, answer: null, failure: `${error.name}: ${error.message}` }),
      );
      heavy.push({ name, ms: Date.now() - started, ...r });
    };

    try {
      await sleep(1_000);
      // Each alone, then all at once.
      for (const [name, query] of HEAVY) await runHeavy(name, query);
      await Promise.all(HEAVY.map(([name, query]) => runHeavy(`${name} (together)`, query)));
      await Promise.all(
        Array.from({ length: WIDE_AT_ONCE }, (_, k) => runHeavy(`wide answer ${k + 1}`, WIDE)),
      );
      await sleep(500);
    } finally {
      stop = true;
      await Promise.all(clients);
      clearInterval(sampler);
    }

    const alive = service.child.exitCode === null && service.child.signalCode === null;
    if (alive) peakMiB = Math.max(peakMiB, residentOf(pid).peakMiB);
    const acknowledged = writes.filter((w) => w.status === 201 || w.status === 202);
    const refused = writes.filter((w) => w.status === 503);
    // What the process shows once the clients have stopped: every acknowledged project.
    const listed = alive
      ? new Set(((await call(base, 'GET', '/api/projects')).body as { name: string }[]).map((p) => p.name))
      : new Set<string>();
    const lost = acknowledged.filter((w) => !listed.has(w.name));

    for (const h of heavy)
      console.log(
        `${h.name}: ${h.ms} ms, HTTP ${h.status}, ` +
          (h.answer
            ? h.answer.type === 'error'
              ? `error ${h.answer.error_code}: ${h.answer.error_message}`
              : `${h.answer.type}, ${h.answer.data?.length} rows${h.answer.truncated ? ', truncated' : ''}`
            : `no answer (${h.failure})`),
      );
    console.log(
      `writes ${JSON.stringify(byStatus(writes))}: acknowledged ${acknowledged.length}, refused 503 ${refused.length}, lost ${lost.length}; ` +
        `reads ${reads.length} (${reads.filter((r) => r.ok).length} answered right); ` +
        `heavy queries refused ${heavy.filter((h) => h.answer?.type === 'error').length} of ${heavy.length}, ` +
        `cut ${heavy.filter((h) => h.answer?.truncated).length}; peak RSS ${peakMiB} MiB; process ${alive ? 'alive' : `exited ${service.child.exitCode ?? service.child.signalCode}`}`,
    );
    for (const r of reads.filter((x) => !x.ok)) console.log(`read not answered: ${JSON.stringify(r)}`);
    // The process lives on, and never met Node's heap limit.
    expectLivedOn(service);
    // Each heavy query was answered: a SQL error naming a limit, or a table cut at the limits.
    for (const h of heavy) {
      expect(h.failure).toBeUndefined();
      expect(h.status).toBe(200);
      if (h.answer!.type === 'error') expect(h.answer!.error_message).toBeTruthy();
      else expect(h.answer).toMatchObject({ type: 'table', truncated: true });
    }
    expect(heavy.filter((h) => h.answer?.type === 'error').length).toBeGreaterThan(0);
    // Every write acknowledged or refused retryably, none acknowledged lost; reads went on.
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const w of writes) expect([201, 202, 503]).toContain(w.status);
    for (const w of refused) expect(Number(w.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(lost).toEqual([]);
    // Other clients' reads were answered all along (a small query may rarely be stopped with the
    // heavy ones it ran beside, with its error: never a dropped connection).
    expect(reads.filter((r) => r.status === 0)).toEqual([]);
    expect(reads.filter((r) => r.ok).length).toBeGreaterThanOrEqual(reads.length * 0.95);
  });
});
