// MCP query calls per second beside the same statement over POST /api/sql/query: what a call's
// session, JSON-RPC framing and its record in the log (one append per call) cost. The service runs
// in a process of its own, as in production (compiled, info-level access log to a file); the clients
// run here, so the MCP SDK client's own work is not counted against the server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fmt, percentile, ratio, startServer, stopServer, tmpDir } from './support';

/** `workers` loops calling `once` for `seconds`: calls per second and latency percentiles. */
const drive = async (workers: number, seconds: number, once: (worker: number) => Promise<unknown>) => {
  const until = performance.now() + seconds * 1000;
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        await once(w);
        times.push(performance.now() - t0);
      }
    }),
  );
  return { rps: times.length / seconds, p50: percentile(times, 50), p99: percentile(times, 99) };
};

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
  const viaHttp = await drive(workers, seconds, () => overHttp());
  const viaMcp = await drive(workers, seconds, overMcp);
  await drive(workers, 1, pingMcp);
  const viaPing = await drive(workers, seconds, pingMcp);
  const recorded = Number((await sql('SELECT count(*) FROM information_schema.MCP_CALLS')).data?.[0]?.[0]);

  const r = ratio(viaMcp.rps, viaHttp.rps);
  console.log(
    `MCP query calls ${fmt(viaMcp.rps)}/s (p50 ${fmt(viaMcp.p50, 1)} ms, p99 ${fmt(viaMcp.p99, 1)} ms) vs the same statement over HTTP ${fmt(viaHttp.rps)}/s (p50 ${fmt(viaHttp.p50, 1)} ms, p99 ${fmt(viaHttp.p99, 1)} ms) → ${fmt(r, 2)} (${workers} clients; every MCP call appends its record: ${fmt(recorded)} calls in information_schema.MCP_CALLS)`,
  );
  console.log(
    `MCP ping (the protocol's round trip alone: no tool, nothing recorded) ${fmt(viaPing.rps)}/s (p50 ${fmt(viaPing.p50, 1)} ms) vs the same HTTP statement → ${fmt(ratio(viaPing.rps, viaHttp.rps), 2)}`,
  );
  for (const client of clients) await client.close();
  await stopServer(server);
  return { name: 'mcp', ratio: r };
};
