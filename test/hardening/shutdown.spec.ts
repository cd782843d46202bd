/**
 * SIGTERM during a long query: the process logged "forced exit", then stayed at 99% CPU for more
 * than 11 minutes holding the DuckDB file, because `process.exit` waits in DuckDB's destructor for
 * the running query. Now running queries are interrupted when SHUTDOWN_GRACE_MS is over and the
 * process exits; a new process opens the same files.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const GRACE_MS = 2000;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

type Service = { child: ChildProcess; base: string; output: () => string; exited: Promise<number | null> };

/** The real service, as `npm run dev` starts it, on its own port and data directory. */
const startService = async (dataDir: string): Promise<Service> => {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      SQL_TIMEOUT_MS: '600000',
      DUCKDB_THREADS: '1',
      EVENT_STORE_URL: '',
      MYSQL_PORT: '0',
      PG_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  // Starting compiles TypeScript on the fly: up to a minute on a busy machine.
  const until = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`${base}/api/util/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > until || child.exitCode !== null)
      throw new Error(`the service did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, base, output: () => output, exited };
};

const sql = (base: string, query: string) =>
  fetch(`${base}/api/sql/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  }).then(
    async (r) =>
      (await r.json()) as { type: string; error_code?: number; error_message?: string; data?: unknown },
    (e: unknown) => ({ type: 'no answer', error_message: String(e) }),
  );

/** Resolves with the exit code, or `timeout` when the process is still there after `ms`. */
const exitWithin = (service: Service, ms: number) =>
  Promise.race([service.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

describe('shutdown during a long query', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-shutdown-'));
  const started: Service[] = [];
  afterAll(async () => {
    // Only the processes this test started, by their pid.
    for (const s of started)
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('given a query that would run for hours, when SIGTERM comes, then the process exits after the grace and a new one opens the same files', async () => {
    const first = await startService(dataDir);
    started.push(first);
    expect((await sql(first.base, 'CREATE PROJECT kept_across_restart')).type).toBe('ok');
    const long = sql(first.base, 'SELECT count(*) FROM range(100000000000) a WHERE sqrt(a.range) > -1');
    await new Promise((r) => setTimeout(r, 1000));
    first.child.kill('SIGTERM');
    // The grace, then well over the time to interrupt and close (it used to be never).
    const code = await exitWithin(first, GRACE_MS + 15_000);
    expect({ code, output: code === 0 ? '' : first.output() }).toEqual({ code: 0, output: '' });
    expect(await long).toMatchObject({
      type: 'error',
      error_code: 1317,
      error_message: expect.stringMatching(/shutting down/),
    });
    expect(first.output()).toMatch(/grace period over: interrupting running queries/);

    const second = await startService(dataDir);
    started.push(second);
    const projects = await sql(
      second.base,
      "SELECT NAME FROM information_schema.databases WHERE NAME = 'kept_across_restart'",
    );
    expect(projects).toMatchObject({ type: 'table', data: [['kept_across_restart']] });
    second.child.kill('SIGTERM');
    expect(await exitWithin(second, GRACE_MS + 15_000)).toBe(0);
  }, 180_000);
});
