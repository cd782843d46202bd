import { fmt, load, ratio, startServer, stopServer, tmpDir } from './support';

/** GET /api/projects through the whole stack against bare express answering constant JSON. */
export const benchHttp = async (seconds: number) => {
  const connections = 32;
  const bare = await startServer('bare-server.ts', { PORT: '47401' });
  await load('http://127.0.0.1:47401/api/projects', connections, 1); // warm-up
  const baseline = await load('http://127.0.0.1:47401/api/projects', connections, seconds);
  await stopServer(bare);

  const app = await startServer('app-server.ts', {
    PORT: '47402',
    DATA_DIR: tmpDir('mindledger-bench-http-'),
  });
  await load('http://127.0.0.1:47402/api/projects', connections, 1);
  const ours = await load('http://127.0.0.1:47402/api/projects', connections, seconds);
  await stopServer(app);

  const r = ratio(ours.rps, baseline.rps);
  console.log(
    `GET /api/projects (${connections} connections, ${seconds} s): ${fmt(ours.rps)} req/s p50 ${ours.p50} ms p99 ${ours.p99} ms` +
      ` vs bare express ${fmt(baseline.rps)} req/s p50 ${baseline.p50} ms p99 ${baseline.p99} ms` +
      ` → ${fmt(r, 2)} (goal ≥ 0.80, issue 41)${ours.errors + ours.non2xx ? ` [errors ${ours.errors}, non-2xx ${ours.non2xx}]` : ''}`,
  );
  return { name: 'http', ratio: r, ours, baseline };
};
