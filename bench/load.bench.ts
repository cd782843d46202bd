import autocannon from 'autocannon';
import {
  fmt,
  jsonHeaders,
  loadAverage,
  mixedRequests,
  rssMiB,
  startServer,
  stopServer,
  tmpDir,
} from './support';

/** A request's label in the printed profile: its method and path, and a statement's first words. */
const labelOf = (r: autocannon.Request) => {
  const query = typeof r.body === 'string' ? (JSON.parse(r.body) as { query?: string }).query : undefined;
  if (query) return `${r.method} ${r.path} ${query.split(' ').slice(0, 4).join(' ')}`;
  const generated = r.setupRequest
    ? r.path === '/api/sql/query'
      ? ' (a new statement each time)'
      : ' (generated)'
    : '';
  return `${r.method} ${r.path}${generated}`;
};

/** Each request of the mix sent alone, at 32 connections for `seconds`: its rate and p99 by itself. */
const eachAlone = async (base: string, requests: autocannon.Request[], seconds: number) => {
  const alone: { label: string; rps: number; p99: number }[] = [];
  for (const request of requests) {
    const r = await autocannon({ url: base, connections: 32, duration: seconds, requests: [request] });
    alone.push({ label: labelOf(request), rps: r.requests.average, p99: r.latency.p99 });
  }
  return alone;
};

/**
 * Mixed traffic as a team would send it, for a bounded time at 32 and then 64 connections: reads
 * (cached and uncached), SQL over projections with a new text per request, and writes (skills
 * created and updated). The service must answer every request (0 errors, 0 non-2xx) and its memory
 * must come back near where it started.
 */
export const benchLoad = async (seconds: number) => {
  const dataDir = tmpDir('mindledger-bench-load-');
  const server = await startServer('app-server.ts', { PORT: '47413', DATA_DIR: dataDir });
  const pid = server.pid!;
  const base = 'http://127.0.0.1:47413';
  await fetch(`${base}/api/projects`, {
    method: 'POST',
    headers: jsonHeaders,
    body: JSON.stringify({ name: 'load' }),
  });
  const rssBefore = Math.round(rssMiB(pid));
  const counter = { n: 0 };
  const results: {
    connections: number;
    rps: number;
    p99: number;
    errors: number;
    non2xx: number;
    unanswered: number;
    /** The machine's load average as the run ended: on a shared machine the rate follows it. */
    load: string;
  }[] = [];
  const requests = [
    ...mixedRequests('load', counter, (n) => ({
      name: `s_${n}`,
      type: 'text2sql',
      params: { database: 'files' },
    })),
    { method: 'GET', path: '/api/databases' },
    {
      method: 'POST',
      path: '/api/sql/query',
      headers: jsonHeaders,
      body: JSON.stringify({ query: 'SELECT count(*) FROM information_schema.skills' }),
    },
    { method: 'GET', path: '/api/projects/load/skills' },
  ] satisfies autocannon.Request[];
  for (const connections of [32, 64]) {
    const r = await autocannon({ url: base, connections, duration: seconds, requests });
    results.push({
      connections,
      rps: r.requests.average,
      p99: r.latency.p99,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
      // Sent but never answered (each connection may have one request in flight when time is up):
      // a hung request is an error too.
      unanswered: Math.max(0, r.requests.sent - r.requests.total - r.errors - connections),
      load: loadAverage(),
    });
  }
  const rssAfter = Math.round(rssMiB(pid));
  const alone = await eachAlone(base, requests, Math.max(2, Math.round(seconds / 2)));
  await stopServer(server);
  for (const r of results)
    console.log(
      `mixed load (GET, SQL, writes) at ${r.connections} connections for ${seconds} s: ${fmt(r.rps)} req/s p99 ${r.p99} ms,` +
        ` errors ${r.errors}, non-2xx ${r.non2xx}, unanswered ${r.unanswered} (goal ≥ 2,000 req/s at 32, p99 ≤ 100 ms, 0, 0, 0; issue 62;` +
        ` load average ${r.load})`,
    );
  console.log(
    `mixed load: RSS ${rssBefore} MiB before, ${rssAfter} MiB after ${counter.n} generated requests`,
  );
  // A mix of equal shares in which each request cost what it costs alone would reach the harmonic
  // mean of the rates alone: near it, the mix is bounded by its dearest requests; far below it, by
  // what the requests do to each other (writes invalidating cached answers, reads waiting for writes).
  const harmonic = alone.length / alone.reduce((sum, a) => sum + 1 / Math.max(a.rps, 1), 0);
  console.log(
    `  where the mix goes: each of its requests alone at 32 connections: ${alone.map((a) => `${a.label} ${fmt(a.rps)} req/s p99 ${a.p99} ms`).join('; ')}` +
      ` → equal shares at those costs would reach ${fmt(harmonic)} req/s, the mix at 32 reached ${fmt(results[0]!.rps)} (${fmt(results[0]!.rps / harmonic, 2)}); load average ${loadAverage()}`,
  );
  return results;
};
