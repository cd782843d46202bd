import type { Server } from 'node:http';

/**
 * How long a kept-alive connection may stay idle before the server closes it. Clients and load
 * balancers reuse idle connections; when the server closes one just as a client sends on it, that
 * request fails with a reset, and a POST is not retried. Node's default, 5 s, met that race in our
 * own suite on a loaded machine (`read ECONNRESET` between two nodes; `fetch failed` for four
 * requests at once under memory pressure), and it is shorter than the idle timeouts of common load
 * balancers (60 s on AWS's), which then answer 502. 65 s is above those: the client closes first.
 */
export const IDLE_CONNECTION_MS = 65_000;

/**
 * The server keeps idle connections `IDLE_CONNECTION_MS` (announced in each answer's `Keep-Alive:
 * timeout=65`, which clients such as undici read). The time a request's headers may take stays
 * above it, as Node requires of kept-alive connections.
 */
export const keepIdleConnections = (server: Server) => {
  server.keepAliveTimeout = IDLE_CONNECTION_MS;
  server.headersTimeout = IDLE_CONNECTION_MS + 1_000;
  return server;
};
