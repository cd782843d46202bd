/**
 * A start catches the read model up with the log before it serves: minutes on a long log or a
 * rebuild. The HTTP port used to listen only after that, so probes and clients met a refused
 * connection and nothing said how far the start had come. Now the port listens at once and
 * answers every request 503 "Starting", with Retry-After and the position the read model has
 * reached, writing nothing, until the service takes it over.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnService } from '../support/service';

type Answer = { status: number; retryAfter: string | null; body: { title?: string; detail?: string } };

const ask = async (base: string, method: string, url: string, body?: unknown): Promise<Answer | null> =>
  fetch(`${base}${url}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(
    async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: (await r.json()) as Answer['body'],
    }),
    () => null,
  );

const until = async <T>(what: string, probe: () => Promise<T | null | false>, output: () => string) => {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const found = await probe();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`${what} did not happen:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('the HTTP port while the service starts', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-starting-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('given a start whose catch-up is under way, then every request is 503 Starting with the position reached, nothing is written, and the service serves once caught up', async () => {
    const { child, base, output, exited } = await spawnService(
      { DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      'test/support/held-start-main.ts',
    );
    try {
      await until('the held catch-up', async () => output().includes('probe: catch-up held'), output);

      const answers = await Promise.all([
        ask(base, 'GET', '/api/health'),
        ask(base, 'GET', '/api/ready'),
        ask(base, 'GET', '/api/util/ping'),
        ask(base, 'GET', '/api/projects'),
        ask(base, 'POST', '/api/projects', { name: 'during_start' }),
        ask(base, 'POST', '/api/sql/query', { query: 'CREATE DATABASE during_start_sql' }),
      ]);
      for (const answer of answers)
        expect(answer).toEqual({
          status: 503,
          retryAfter: '5',
          body: {
            title: 'Starting',
            status: 503,
            detail: expect.stringMatching(
              /^The service is starting: its read model is catching up with the log \(it has applied it up to position \d+\)\. Nothing was read or written\. Retry shortly\.$/,
            ),
          },
        });
      await until(
        'the starting line',
        async () => /starting: the HTTP port answers 503 until the read model has caught up/.test(output()),
        output,
      );
      expect(output()).not.toMatch(/mindledger listening/);

      child.kill('SIGUSR2');
      await until('serving', async () => (await ask(base, 'GET', '/api/util/ping'))?.status === 200, output);
      // Its log line comes through the pipe on its own time: waited for, not assumed by now.
      await until('the listening line', async () => output().includes('mindledger listening'), output);
      await fetch(`${base}/api/ready`).then((r) => expect(r.status).toBe(200));
      // What was sent while it started left nothing behind.
      const projects = (await (await fetch(`${base}/api/projects`)).json()) as { name: string }[];
      expect(projects.map((p) => p.name)).toEqual(['mindsdb']);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);

  it('given a port another process holds, then the start ends with exit code 1, saying which port cannot be listened on', async () => {
    const port = await freePort();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const { output, exited } = await spawnService({
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        PORT: String(port),
      });
      expect(await exited).toBe(1);
      expect(output()).toMatch(/the HTTP port cannot be listened on/);
      expect(output()).toMatch(/EADDRINUSE/);
      expect(output()).toContain(`"port":${port}`);
      expect(output()).not.toMatch(/mindledger listening/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 120_000);
});
