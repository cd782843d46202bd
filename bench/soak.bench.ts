// Issue 62 goal 6, the soak: mixed traffic at a steady rate for a long time (30 minutes by default),
// the service's RSS read after each round once it has sat idle a few seconds. The data it writes is
// bounded (each skill created is updated and deleted by the same connection), so growth that stays
// is memory the service keeps, not data it was asked to hold.
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

const PORT = 47451;
const base = `http://127.0.0.1:${PORT}`;
const IDLE_MS = 5_000;

type Context = { skill?: string };

/** One round of traffic: each connection reads, runs a new SQL text, and creates, updates and deletes a skill. */
const round = async (seconds: number, rate: number, counter: { n: number }) => {
  const r = await autocannon({
    url: base,
    connections: 8,
    overallRate: rate,
    duration: seconds,
    requests: [
      ...mixedRequests('soak', counter, (n, context: Context) => {
        context.skill = `s_${n}`;
        return { name: context.skill, type: 'text2sql', params: { database: 'files' } };
      }),
      {
        method: 'PUT',
        headers: jsonHeaders,
        setupRequest: (req, context: Context) => ({
          ...req,
          path: `/api/projects/soak/skills/${context.skill}`,
          body: JSON.stringify({
            skill: { params: { database: 'files', description: `round ${counter.n}` } },
          }),
        }),
      },
      {
        method: 'DELETE',
        setupRequest: (req, context: Context) => ({
          ...req,
          path: `/api/projects/soak/skills/${context.skill}`,
        }),
      },
    ],
  });
  return { requests: r.requests.total, errors: r.errors + r.timeouts, non2xx: r.non2xx, p99: r.latency.p99 };
};

/** The JS heap in use (not after a collection) and the read model's log position, from GET /api/metrics. */
const metrics = async () => {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    heapMiB: value('nodejs_heap_size_used_bytes') / 2 ** 20,
    position: value('mindledger_read_model_position'),
  };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

export const benchSoak = async (minutes: number, rate: number) => {
  const dataDir = tmpDir('mindledger-bench-soak-');
  const server = await startServer('app-server.ts', { PORT: String(PORT), DATA_DIR: dataDir });
  const pid = server.pid!;
  try {
    await fetch(`${base}/api/projects`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ name: 'soak' }),
    });
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = rssMiB(pid);
    const roundSeconds = Math.min(60, Math.max(5, Math.round((minutes * 60) / 10)));
    const rounds = Math.max(3, Math.round((minutes * 60) / roundSeconds));
    const counter = { n: 0 };
    const samples: number[] = [];
    const heaps: number[] = [];
    const positions: number[] = [];
    let requests = 0;
    let errors = 0;
    let non2xx = 0;
    let p99 = 0;
    for (let k = 0; k < rounds; k++) {
      const r = await round(roundSeconds, rate, counter);
      requests += r.requests;
      errors += r.errors;
      non2xx += r.non2xx;
      p99 = Math.max(p99, r.p99);
      await new Promise((r) => setTimeout(r, IDLE_MS));
      samples.push(rssMiB(pid));
      const m = await metrics();
      heaps.push(m.heapMiB);
      positions.push(m.position);
    }
    // The first round fills caches up to their bounds; growth is judged between the thirds after it.
    const third = Math.max(1, Math.floor((samples.length - 1) / 3));
    const early = median(samples.slice(1, 1 + third));
    const late = median(samples.slice(-third));
    const heapEarly = median(heaps.slice(1, 1 + third));
    const heapLate = median(heaps.slice(-third));
    const events = positions.at(-1)! - positions[third]!;
    console.log(
      `soak: ${fmt(rounds)} rounds of ${roundSeconds} s at ${fmt(rate)} req/s (GET, new SQL text, skill create/update/delete), ` +
        `${fmt(requests)} requests, errors ${errors}, non-2xx ${non2xx}, worst round p99 ${p99} ms; ` +
        `RSS idle ${fmt(idle)} MiB, after the rounds (idle ${IDLE_MS / 1000} s each) ${samples.map((s) => fmt(s)).join(' ')} MiB; ` +
        `early third median ${fmt(early)}, late third ${fmt(late)} → growth ${fmt(late - early)} MiB over ` +
        `${fmt(((samples.length - 1 - third) * roundSeconds) / 60, 1)} minutes, while the log grew by ${fmt(events)} events ` +
        `(goal: none beyond noise and the read model's own growth); JS heap in use (not collected) ${heaps.map((h) => fmt(h)).join(' ')} MiB, ` +
        `early third median ${fmt(heapEarly)}, late ${fmt(heapLate)}; load average ${loadAverage()}`,
    );
  } finally {
    await stopServer(server);
  }
};
