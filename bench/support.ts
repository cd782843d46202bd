import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

/**
 * Scratch directories the run made, removed when it exits: a whole `npm run bench` left about
 * 640 MB of data directories in the temporary directory, and benchmarks that stop early (an error,
 * a Ctrl-C after a turn) do not reach their own clean-up.
 */
const scratch = new Set<string>();
process.on('exit', () => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});
export const tmpDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  scratch.add(dir);
  return dir;
};
/** Keeps `dir` (made by `tmpDir`) after the run, to look into. */
export const keepTmpDir = (dir: string) => scratch.delete(dir);

/**
 * Whether this is the benchmarks' build (`npm run bench` compiles them and the service with tsc into
 * dist-bench/, as `npm start` runs the compiled service) rather than TypeScript run through tsx.
 * tsx's transform is no measure of the service: every cross-module access goes through an export
 * getter and every closure made gets its name set, which cost the MySQL door's `SELECT 1` about a
 * third of its rate.
 */
const compiled = __filename.endsWith('.js');

/** Starts a server script of bench/ in its own process, resolving once it listens. */
export const startServer = (script: string, env: Record<string, string>): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const file = compiled ? script.replace(/\.ts$/, '.js') : script;
    const child = fork(path.join(__dirname, file), [], {
      // The benchmarks' fakes (LLM, embeddings, channels) listen on loopback, which the outbound policy refuses by default.
      env: { OUTBOUND_ALLOW: '127.0.0.0/8,::1', ...process.env, ...env },
      // BENCH_SERVER_NODE_ARGS: Node options for the service alone (`--cpu-prof --cpu-prof-dir=…` to profile it).
      execArgv: [
        ...(compiled ? [] : ['--import', 'tsx']),
        // As `npm start` runs the service (package.json, docker/Dockerfile).
        '--max-semi-space-size=64',
        ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('message', (m) => (m === 'ready' ? resolve(child) : reject(new Error(String(m)))));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });

export const stopServer = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

export type LoadResult = { rps: number; p50: number; p99: number; errors: number; non2xx: number };

export const load = async (
  url: string,
  connections: number,
  seconds: number,
  request: { method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> } = {},
): Promise<LoadResult> => {
  const r = await autocannon({ url, connections, duration: seconds, pipelining: 1, ...request });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
  };
};

export const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The machine's load average over 1, 5 and 15 minutes, printed beside every figure a busy machine moves. */
export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => fmt(l, 1))
    .join(', ');

export const jsonHeaders = { 'content-type': 'application/json' };

/**
 * The requests every mixed-traffic bench starts with (load, noisy, soak): the project list, a SQL
 * read over `project`'s skills with a new text each time (no answer cache: parse and name resolution
 * every time, and the statement and answer caches see texts they must bound), and a skill created in
 * `project`, its body made by `skill` from the counter (and the connection's context, for a bench
 * that goes on to update and delete it).
 */
export const mixedRequests = (
  project: string,
  counter: { n: number },
  skill: (n: number, context: Record<string, unknown>) => object,
): autocannon.Request[] => [
  { method: 'GET', path: '/api/projects' },
  {
    method: 'POST',
    path: '/api/sql/query',
    headers: jsonHeaders,
    setupRequest: (req) => ({
      ...req,
      body: JSON.stringify({
        query: `SELECT name, type FROM ${project}.skills WHERE ${counter.n++} >= 0 ORDER BY name LIMIT 10`,
      }),
    }),
  },
  {
    method: 'POST',
    path: `/api/projects/${project}/skills`,
    headers: jsonHeaders,
    setupRequest: (req, context) => ({
      ...req,
      body: JSON.stringify({ skill: skill(counter.n++, context as Record<string, unknown>) }),
    }),
  },
];

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/**
 * A baseline's rate and ours, measured in turns (the baseline, then ours, `rounds` times), each
 * side's median compared: one measurement of each moved a ratio by half between runs, as the
 * machine's other work came and went. `turns`: each turn's ratio, in order.
 */
export const inTurns = async (
  baseline: () => Promise<number>,
  ours: () => Promise<number>,
  rounds = 3,
): Promise<{ baseline: number; ours: number; ratio: number; turns: string }> => {
  const measured = { baseline: [] as number[], ours: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    measured.baseline.push(await baseline());
    measured.ours.push(await ours());
  }
  const medians = { baseline: percentile(measured.baseline, 50), ours: percentile(measured.ours, 50) };
  return {
    ...medians,
    ratio: ratio(medians.ours, medians.baseline),
    turns: measured.ours.map((o, i) => fmt(ratio(o, measured.baseline[i] ?? 0), 2)).join(', '),
  };
};

/** Resident memory of a process, from /proc (Linux), in MiB (0 when it cannot be read: the process is gone). */
export const rssMiB = (pid: number) => {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.replace(/\D+/g, '')) / 1024 : 0;
  } catch {
    return 0;
  }
};

/**
 * `work`'s result and the peak resident memory of process `pid` while it ran, sampled every
 * `everyMs` (from /proc: the service in a process of its own).
 */
export const peakRssDuring = async <T>(pid: number, work: () => Promise<T>, everyMs = 50) => {
  let peak = rssMiB(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), everyMs);
  try {
    return { result: await work(), peak };
  } finally {
    clearInterval(sampler);
  }
};

/**
 * Wall time of `run`, the CPU time the whole process spent meanwhile (worker threads included: on a
 * shared machine wall time includes waiting for a core), and the peak RSS sampled every 20 ms.
 */
export const measure = async <T>(run: () => Promise<T> | T) => {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    const result = await run();
    const used = process.cpuUsage(cpu);
    return {
      result,
      ms: performance.now() - started,
      cpuMs: (used.user + used.system) / 1000,
      peakRss: Math.max(peak, process.memoryUsage().rss),
    };
  } finally {
    clearInterval(sampler);
  }
};
