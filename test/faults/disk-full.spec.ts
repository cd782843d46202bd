/**
 * A full disk under the data directory (issue 63). Measured before: the read model's DuckDB file on a
 * full 48 MB tmpfs, eight writers: every write then answered 503 "Read model stopped … Could not
 * write file" (the disk unnamed), the retry pause grew to a minute, so writes did not resume within
 * 30 s of the space being freed, and acknowledged writes stayed out of reads until a restart.
 * Now: a write is acknowledged and durable, or refused naming the disk (503, Retry-After); reads
 * keep answering; once space is freed, writes resume and the read model catches up from the log,
 * without a restart. The disk is real: a tmpfs of its own, filled by a file until ENOSPC.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../support/app';
import { logLines, type LoggedLines } from '../support/logLines';
import { logStart } from '../../src/eventlog/types';
import { byStatus, fillDisk, mountSmallDisk, sleep, type Outcome } from './support';
import { untilTrue } from '../support/until';

jest.setTimeout(60_000);

const WRITERS = 16;
const DISK_NAMED = /no space left on the device holding DATA_DIR/;

/** Sixteen clients creating projects of unique names until told to stop; every answer kept. */
const writers = (t: TestApp, prefix: string) => {
  const outcomes: Outcome[] = [];
  let stop = false;
  const loops = Array.from({ length: WRITERS }, async (_, k) => {
    for (let i = 0; !stop; i++) {
      const name = `${prefix}_${k}_${i}`;
      const res = await t.http.post('/api/projects').send({ name });
      const body = res.body as { detail?: string };
      outcomes.push({
        name,
        status: res.status,
        detail: body.detail ?? '',
        retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
      });
      // A refused client waits a moment, as one honouring Retry-After would (not its whole length).
      if (res.status >= 500) await sleep(50);
    }
  });
  return {
    outcomes,
    stop: async () => {
      stop = true;
      await Promise.all(loops);
    },
  };
};

/** The ProjectCreated names in the log, with how many times each is there. */
const createdInLog = async (t: TestApp) => {
  const counts = new Map<string, number>();
  let cursor = logStart;
  for (;;) {
    const { events, cursor: next } = await t.running.ctx.log.readAll(cursor, 5_000);
    if (events.length === 0) break;
    for (const e of events)
      if (e.type === 'ProjectCreated') counts.set(e.data.name, (counts.get(e.data.name) ?? 0) + 1);
    cursor = next;
  }
  return counts;
};

const projectNames = async (t: TestApp) =>
  ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map((p) => p.name);

type StatusBody = { read_model?: { failed?: { attempts: number } | null } };

type Ready = { status: number; body: { detail?: string; position?: string; log_head?: string } };
const ready = async (t: TestApp): Promise<Ready> => {
  const res = await t.http.get('/api/ready');
  return { status: res.status, body: res.body as Ready['body'] };
};

/**
 * Writes, fills the disk, writes on while it is full (reading too), frees it, and checks what every
 * client was told against the log and the reads.
 */
const runEpisode = async (t: TestApp, disk: string, prefix: string, logged: LoggedLines) => {
  const w = writers(t, prefix);
  await untilTrue(
    'every writer acknowledged before the disk fills',
    () => Promise.resolve(w.outcomes.filter((o) => o.status === 201 || o.status === 202).length >= WRITERS),
    { ms: 20_000 },
  );
  const { file, taken } = fillDisk(disk);
  const filledAt = Date.now();
  const answeredAtFill = w.outcomes.length;
  // While full: reads answer, and readiness names the disk once the read model met it. The disk
  // stays full until the read model failed on it twice (a retry failed too: one "projection
  // failed" line for both), readiness said so and writers were answered twice over; 4 s at most.
  const readsWhileFull: number[] = [];
  let readyWhileFull: Ready | null = null;
  let attempts = 0;
  while (Date.now() - filledAt < 4_000) {
    readsWhileFull.push((await t.http.get('/api/projects')).status);
    const r = await ready(t);
    if (r.status !== 200) readyWhileFull = r;
    const failed = ((await t.http.get('/api/status')).body as StatusBody).read_model?.failed;
    attempts = Math.max(attempts, failed?.attempts ?? 0);
    const answered = w.outcomes.length - answeredAtFill;
    if (attempts >= 2 && readyWhileFull !== null && answered >= 2 * WRITERS) break;
    await sleep(100);
  }
  const whileFull = w.outcomes.length;
  fs.rmSync(file);
  const freedAt = Date.now();
  let resumedAfterMs: number | null = null;
  await untilTrue(
    'a write acknowledged after the space was freed',
    () => {
      const ok = w.outcomes.slice(whileFull).some((o) => o.status === 201 || o.status === 202);
      if (ok && resumedAfterMs === null) resumedAfterMs = Date.now() - freedAt;
      return Promise.resolve(ok);
    },
    { ms: 20_000 },
  );
  await sleep(500);
  await w.stop();
  await untilTrue(
    'the read model at the log head',
    async () => {
      const r = await ready(t);
      return r.status === 200 && r.body.position === r.body.log_head;
    },
    {
      ms: 30_000,
      explain: async () =>
        `ready ${JSON.stringify(await ready(t))}, status ${JSON.stringify((await t.http.get('/api/status')).body?.read_model)}`,
    },
  );
  const convergedAfterMs = Date.now() - freedAt;

  const log = await createdInLog(t);
  const visible = await projectNames(t);
  const visibleCount = new Map<string, number>();
  for (const n of visible) visibleCount.set(n, (visibleCount.get(n) ?? 0) + 1);
  const acknowledged = w.outcomes.filter((o) => o.status === 201 || o.status === 202);
  const refused = w.outcomes.filter((o) => o.status === 503 || o.status === 507);
  const lost = acknowledged.filter((o) => log.get(o.name) !== 1 || visibleCount.get(o.name) !== 1);
  const duplicated =
    [...log].filter(([, n]) => n > 1).length + [...visibleCount].filter(([, n]) => n > 1).length;
  const failedLines = logged.lines.filter((l) => l.level >= 50 && /^projection failed/.test(l.msg));
  console.log(
    `${prefix}: disk filled with ${(taken / 2 ** 20).toFixed(1)} MiB; answers ${JSON.stringify(byStatus(w.outcomes))}; ` +
      `acknowledged ${acknowledged.length}, lost ${lost.length}, duplicated ${duplicated}; ` +
      `writes resumed ${resumedAfterMs} ms and the read model converged ${convergedAfterMs} ms after the space was freed; ` +
      `reads while full ${JSON.stringify(byStatus(readsWhileFull.map((status) => ({ name: '', status, detail: '', retryAfter: null }))))}; ` +
      `"projection failed" logged at error ${failedLines.length} time(s)`,
  );
  return { w, log, acknowledged, refused, lost, duplicated, readsWhileFull, readyWhileFull, failedLines };
};

describe('a full disk under the data directory', () => {
  let disk: ReturnType<typeof mountSmallDisk>;
  beforeAll(() => {
    disk = mountSmallDisk(48);
  });
  afterAll(() => disk?.unmount());

  it("given the read model's DuckDB file on a disk that fills while 16 clients write, then every write lands in the log while the read model is behind (ready names the disk), every one is read back once, and the read model catches up without a restart once space is freed", async () => {
    const logged = logLines();
    // The log elsewhere (the suite's scratch directory): only the read model meets the full disk.
    const t = await startTestApp(
      'sqlite',
      { DUCKDB_FILE: path.join(disk.dir, 'projections.duckdb') },
      { logStream: logged.stream },
    );
    try {
      const r = await runEpisode(t, disk.dir, 'rm', logged);
      expect(r.acknowledged.length).toBeGreaterThan(0);
      expect(r.lost).toEqual([]);
      expect(r.duplicated).toBe(0);
      // The log is fine, so every write lands, none refused, while the read model is behind (ready
      // says so below, naming the disk); once space is freed every one is read back.
      expect(r.refused).toEqual([]);
      for (const o of r.w.outcomes) expect([201, 202]).toContain(o.status);
      expect(r.readsWhileFull.every((s) => s === 200)).toBe(true);
      expect(r.readyWhileFull?.status).toBe(503);
      expect(r.readyWhileFull?.body.detail).toMatch(DISK_NAMED);
      // One line for the episode, not one per retry.
      expect(r.failedLines).toHaveLength(1);
      expect(logged.lines.some((l) => l.msg === 'projection recovered')).toBe(true);
    } finally {
      await t.dispose();
    }
  });

  it('given DATA_DIR (the SQLite log and the read model) on a disk that fills while 16 clients write, then nothing acknowledged is lost and writes resume once space is freed', async () => {
    const logged = logLines();
    const t = await startTestApp(
      'sqlite',
      { DATA_DIR: path.join(disk.dir, 'data') },
      { logStream: logged.stream },
    );
    try {
      const r = await runEpisode(t, disk.dir, 'all', logged);
      expect(r.acknowledged.length).toBeGreaterThan(0);
      expect(r.lost).toEqual([]);
      expect(r.duplicated).toBe(0);
      expect(r.refused.length).toBeGreaterThan(0);
      for (const o of r.w.outcomes) expect([201, 202, 503, 507]).toContain(o.status);
      for (const o of r.refused) {
        expect(o.detail).toMatch(/no space left on the device holding DATA_DIR/);
        expect(Number(o.retryAfter)).toBeGreaterThanOrEqual(1);
        if (/^Nothing was written/.test(o.detail)) expect(r.log.has(o.name)).toBe(false);
      }
      expect(r.readsWhileFull.every((s) => s === 200)).toBe(true);
      expect(r.failedLines.length).toBeLessThanOrEqual(1);
    } finally {
      await t.dispose();
    }
  });
});
