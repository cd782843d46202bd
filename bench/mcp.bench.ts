// MCP query calls per second beside the same statement over POST /api/sql/query: what a call's
// session, JSON-RPC framing and its record in the log (one append per call) cost. The service runs
// in a process of its own, as in production (compiled, info-level access log to a file); the clients
// run here, so the MCP SDK client's own work is not counted against the server.
import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fmt, loadAverage, percentile, ratio, startServer, stopServer, tmpDir } from './support';

/** `workers` loops calling `once` for `seconds`: each call's time, in `times`. */
const drive = async (
  workers: number,
  seconds: number,
  once: (worker: number) => Promise<unknown>,
  times: number[] = [],
) => {
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        await once(w);
        times.push(performance.now() - t0);
      }
    }),
  );
  return times;
};

/** CPU time (ms) a process has used so far: its main thread's, and its other threads' (libuv's pool, DuckDB's, V8's). Linux only. */
type Cpu = { readonly main: number; readonly other: number };
const TICK_MS = 10; // USER_HZ is 100 on Linux
const cpuOf = (pid: number | undefined): Cpu => {
  if (pid === undefined || !fs.existsSync(`/proc/${pid}/task`)) return { main: 0, other: 0 };
  let main = 0;
  let other = 0;
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    if (task === String(pid)) main += ms;
    else other += ms;
  }
  return { main, other };
};
const clientCpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** What one path did over its turns: each call's time, and the CPU both processes spent on it. */
type Measured = { times: number[]; server: { main: number; other: number }; client: number };

const rates = ({ times, server, client }: Measured, seconds: number) => ({
  rps: times.length / seconds,
  p50: percentile(times, 50),
  p99: percentile(times, 99),
  // CPU per call, ms: on a machine whose cores are all busy, the rates follow these.
  cpu: {
    main: server.main / times.length,
    other: server.other / times.length,
    client: client / times.length,
  },
});

/**
 * The paths measured in turns of `seconds / ROUNDS` each, one after the other, for `seconds` each in
 * all: the machine is shared, and its load moves within seconds; taking turns exposes both to it alike.
 * The service's CPU is read around each turn (`serverPid`), the bench's own around it too.
 */
const ROUNDS = 5;
const inTurns = async <K extends string>(
  workers: number,
  seconds: number,
  serverPid: number | undefined,
  paths: Record<K, (worker: number) => Promise<unknown>>,
) => {
  const names = Object.keys(paths) as K[];
  const measured = new Map(
    names.map((k): [K, Measured] => [k, { times: [], server: { main: 0, other: 0 }, client: 0 }]),
  );
  for (let round = 0; round < ROUNDS; round++)
    for (const name of names) {
      const m = measured.get(name)!;
      const [server0, client0] = [cpuOf(serverPid), clientCpu()];
      await drive(workers, seconds / ROUNDS, paths[name], m.times);
      const [server1, client1] = [cpuOf(serverPid), clientCpu()];
      m.server.main += server1.main - server0.main;
      m.server.other += server1.other - server0.other;
      m.client += client1 - client0;
    }
  return Object.fromEntries(names.map((k) => [k, rates(measured.get(k)!, seconds)])) as Record<
    K,
    ReturnType<typeof rates>
  >;
};

const cpuText = (r: ReturnType<typeof rates>) =>
  `service ${fmt(r.cpu.main + r.cpu.other, 2)} ms (main thread ${fmt(r.cpu.main, 2)}, other threads ${fmt(r.cpu.other, 2)}), bench client ${fmt(r.cpu.client, 2)} ms`;

export const benchMcp = async (seconds: number) => {
  const workers = 8;
  const port = '47431';
  const server = await startServer('app-server.ts', {
    PORT: port,
    DATA_DIR: tmpDir('mindledger-bench-mcp-'),
    LEDGER_CHECKPOINT_EVENTS: '1000000000',
    LEDGER_CHECKPOINT_MS: '86400000',
    LEDGER_CHECKPOINT_ON_STOP: 'false',
  });
  const base = `http://127.0.0.1:${port}`;
  const statement = 'SELECT 1 AS one';

  const sql = (query: string) =>
    fetch(`${base}/api/sql/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    }).then((r) => r.json() as Promise<{ data?: unknown[][] }>);
  const overHttp = () => sql(statement);
  const clients = await Promise.all(
    Array.from({ length: workers }, async (_, i) => {
      const client = new Client({ name: 'bench', version: String(i) });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/`)));
      return client;
    }),
  );
  const overMcp = (w: number) => clients[w]!.callTool({ name: 'query', arguments: { query: statement } });
  // MCP's own round trip (session, Streamable HTTP, JSON-RPC): a ping is answered, not recorded.
  const pingMcp = (w: number) => clients[w]!.ping();

  // Warm both paths, then measure each in turn.
  await drive(workers, 1, () => overHttp());
  await drive(workers, 1, overMcp);
  await drive(workers, 1, pingMcp);
  const {
    http: viaHttp,
    mcp: viaMcp,
    ping: viaPing,
  } = await inTurns(workers, seconds, server.pid, { http: () => overHttp(), mcp: overMcp, ping: pingMcp });
  const recorded = Number((await sql('SELECT count(*) FROM information_schema.MCP_CALLS')).data?.[0]?.[0]);

  const r = ratio(viaMcp.rps, viaHttp.rps);
  // The machine's load over the last minute: on a shared machine the rates move with it, the ratio less.
  const load = loadAverage();
  console.log(
    `MCP query calls ${fmt(viaMcp.rps)}/s (p50 ${fmt(viaMcp.p50, 1)} ms, p99 ${fmt(viaMcp.p99, 1)} ms) vs the same statement over HTTP ${fmt(viaHttp.rps)}/s (p50 ${fmt(viaHttp.p50, 1)} ms, p99 ${fmt(viaHttp.p99, 1)} ms) → ${fmt(r, 2)} (goal ≥ 0.5, issue 62; ${workers} clients; every MCP call appends its record: ${fmt(recorded)} calls in information_schema.MCP_CALLS)`,
  );
  console.log(
    `MCP ping (the protocol's round trip alone: no tool, nothing recorded) ${fmt(viaPing.rps)}/s (p50 ${fmt(viaPing.p50, 1)} ms) vs the same HTTP statement → ${fmt(ratio(viaPing.rps, viaHttp.rps), 2)}; load average ${load}`,
  );
  console.log(
    `CPU per call — HTTP statement: ${cpuText(viaHttp)}; MCP query: ${cpuText(viaMcp)}; MCP ping: ${cpuText(viaPing)}`,
  );
  for (const client of clients) await client.close();
  await stopServer(server);
  return { name: 'mcp', ratio: r };
};
