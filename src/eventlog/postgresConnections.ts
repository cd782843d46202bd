import type pg from 'pg';
import { messageOf, unavailable } from '../shared/errors';

/**
 * SQLSTATEs and socket errors meaning the connection, not the statement, failed: an administrator
 * terminated the backend (57P01), the server shut down or restarted (57P02, 57P03), the connection
 * class (08…), or the socket went away (a failover, a firewall cutting idle connections).
 */
const LOST_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
const LOST_MESSAGES =
  /Connection terminated|terminating connection|not queryable|server closed the connection|Connection ended/i;

/** Whether `error` means the connection to PostgreSQL was lost (the statement may be retried on another). */
export const isConnectionLost = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  // 08P01 (protocol violation: a NUL in a text parameter, "invalid message format") is the
  // statement's, answered again the same on any connection.
  if (code === '08P01') return false;
  if (typeof code === 'string' && (LOST_CODES.has(code) || code.startsWith('08'))) return true;
  return LOST_MESSAGES.test(messageOf(error));
};

/**
 * Makes a pool survive its connections being cut. pg-pool emits 'error' on the pool when an idle
 * client's connection drops, and pg emits 'error' on a checked-out client whose socket ends between
 * two of its statements: either, unheard, ended the process (`pg_terminate_backend`, a PostgreSQL
 * restart or failover). The dropped client is discarded by the pool and the next query opens
 * another; the statement that was running fails with the connection's error, which callers retry.
 */
export const survivingDrops = <P extends pg.Pool>(pool: P, onDrop?: (error: Error) => void): P => {
  pool.on('error', (error) => onDrop?.(error));
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return pool;
};

/** What a client is told when the log's database stays unreachable: retry shortly (503, Retry-After). */
export const logUnavailable = (error: unknown, nothingWritten: boolean) =>
  unavailable(
    `${nothingWritten ? 'Nothing was written: ' : ''}the event log (PostgreSQL) is not reachable: ${messageOf(error)}. Retry shortly.`,
    1,
    'Event log unavailable',
  );

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many times a statement that lost its connection is run again, on a fresh one, before giving up. */
export const RECONNECT_ATTEMPTS = 3;

/**
 * Runs a statement that may be repeated (a read), again on a fresh connection when its
 * connection was lost, with a short pause between attempts; a connection still lost after
 * RECONNECT_ATTEMPTS answers 503 (`logUnavailable`). Other errors go through as they are.
 */
export const rerunOnDrop = async <T>(work: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      if (attempt >= RECONNECT_ATTEMPTS) throw logUnavailable(error, false);
      await pause(50 * 2 ** attempt);
    }
  }
};
