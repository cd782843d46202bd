/**
 * A local HTTP endpoint for the channel specs: records each request with its raw body and answers
 * with what the spec's handler says (status, headers, body), like a webhook receiver or our own route.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Received = {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly raw: Buffer;
};

export type Reply = {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Wait this long before answering (a slow receiver). */
  readonly delayMs?: number;
};

export type Handler = (request: Received) => Reply;

export const startReceiver = async (initial: Handler = () => ({ status: 200 })) => {
  let handler = initial;
  const received: Received[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const request: Received = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        raw: Buffer.concat(parts),
      };
      received.push(request);
      const reply = handler(request);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? '');
      };
      if (!reply.delayMs) return answer();
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, reply.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    received: (): readonly Received[] => received,
    handle(next: Handler) {
      handler = next;
    },
    reset() {
      received.length = 0;
      handler = initial;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A port nothing listens on (bound, then released). */
export const closedPort = async () => {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

/** The error a promise rejects with (fails the spec if it resolves). */
export const rejection = async <E>(work: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> => {
  try {
    await work;
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
};
