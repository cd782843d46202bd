import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { bundled } from './bundled';

const ROOT = path.resolve(__dirname, '../..');

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

export type Service = {
  child: ChildProcess;
  base: string;
  output: () => string;
  exited: Promise<number | null>;
};

/**
 * The real service's process (`main`, src/main.ts or a probe around it), on a port of its own,
 * its stdout and stderr piped: not waited for (a spec may stop it part way through its start).
 * Its source is bundled (test/support/bundled.ts) and run by node alone, as `npm start` runs dist/.
 */
export const spawnService = async (env: Record<string, string>, main = 'src/main.ts') => {
  const port = await freePort();
  const child = spawn(process.execPath, [await bundled(main)], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DUCKDB_THREADS: '1',
      EVENT_STORE_URL: '',
      MYSQL_PORT: '0',
      PG_PORT: '0',
      // The suite's fakes listen on loopback, which the outbound policy refuses by default.
      OUTBOUND_ALLOW: '127.0.0.0/8,::1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, base: `http://127.0.0.1:${port}`, output: () => output, exited };
};

/** How many times a start that found its port taken is tried again on another (`startService`). */
const PORT_TRIES = 3;

/**
 * Waits for a spawned service to answer its ping: `up`, or `port taken` when it exited unable to
 * listen; throws when it exited otherwise or did not answer within 90 s.
 */
const answering = async ({ child, base, output }: Awaited<ReturnType<typeof spawnService>>) => {
  // Up to a minute on a busy machine (its first start in a spec file bundles it too).
  const until = Date.now() + 90_000;
  for (;;) {
    // Bounded: whatever took the port may accept and never answer.
    const ok = await fetch(`${base}/api/util/ping`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok && child.exitCode === null) return 'up';
    if (child.exitCode !== null && /EADDRINUSE/.test(output())) return 'port taken';
    if (Date.now() > until || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
};

/**
 * The real service in a process of its own (as `npm start` runs it), on its own port. The port is
 * one the kernel had free a moment before the process listens: another socket may take it meanwhile
 * (CI: `listen EADDRINUSE`, a spec failed), so a process that exits saying so is started again on another.
 */
export const startService = async (env: Record<string, string>): Promise<Service> => {
  for (let attempt = 1; ; attempt++) {
    const spawned = await spawnService(env);
    if ((await answering(spawned)) === 'up') return spawned;
    if (attempt === PORT_TRIES) throw new Error(`the service did not start:\n${spawned.output()}`);
  }
};

/** JSON over HTTP to a service: the status and the parsed body. */
export const call = async (base: string, method: string, url: string, body?: unknown) => {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
};

export const sqlOn = async (base: string, query: string) =>
  (await call(base, 'POST', '/api/sql/query', { query })).body as {
    type: string;
    data?: unknown[][];
    column_names?: string[];
    error_message?: string;
  };

/** Kills a process now (SIGKILL: no shutdown, no flush) and waits for it to be gone. */
export const killNow = async (service: Service) => {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await service.exited;
};
