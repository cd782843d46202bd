import type { Server } from 'node:http';
import { Worker } from 'node:worker_threads';

/** Shared by the SQL hardening specs that check the event loop stays free during a request. */
export type Ping = { sentAt: number; status?: number; body?: unknown; error?: string };

/**
 * Pings `url` every 200 ms from a worker thread (this thread shares the server's event loop, so
 * its own timers would wait with it) until `stop` is called and at least three pings were sent;
 * each ping has `timeoutMs` to answer.
 */
export const pingFromAnotherThread = (url: string, timeoutMs: number) => {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const started = Date.now();
     const pings = [];
     let stopped = false;
     parentPort.on('message', () => (stopped = true));
     const tick = () => {
       if (stopped && pings.length >= 3) {
         Promise.all(pings).then((results) => parentPort.postMessage(results));
         return;
       }
       const sentAt = Date.now() - started;
       pings.push(
         fetch(workerData.url, { signal: AbortSignal.timeout(workerData.timeoutMs) })
           .then(async (res) => ({ sentAt, status: res.status, body: await res.json() }))
           .catch((e) => ({ sentAt, error: String(e) })),
       );
       setTimeout(tick, 200);
     };
     tick();`,
    { eval: true, workerData: { url, timeoutMs } },
  );
  const results = new Promise<Ping[]>((resolve, reject) => {
    worker.once('message', (r: Ping[]) => {
      resolve(r);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
  return { stop: () => worker.postMessage('stop'), results };
};

/** Listens on an ephemeral port (pings need a real socket); returns the base URL and a closer. */
export const serve = async (app: { listen(port: number, host: string): Server }) => {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
};
