import pg from 'pg';
import type { LogNews } from './types';
import { messageOf } from '../shared/errors';

/** The channel every append is announced on (NOTIFY is per database, so one name serves all logs). */
export const APPENDED_CHANNEL = 'mindledger_appended';

type NewsFeedOptions = {
  /** First pause before reconnecting a dropped connection; it doubles up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
};

/**
 * One dedicated connection LISTENing on the channel, opened when the first listener follows and
 * closed when the last one stops. A dropped connection is reopened with back-off; listeners hear
 * `listening` each time it starts listening (what was committed before was not announced to them)
 * and `lost` when it drops.
 */
export const appendNewsFeed = (connectionString: string, options: NewsFeedOptions = {}) => {
  const minBackoffMs = options.minBackoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 5_000;
  const listeners = new Set<(news: LogNews) => void>();
  let client: pg.Client | null = null;
  let reconnect: NodeJS.Timeout | null = null;
  let failures = 0;
  let closed = false;

  const tell = (news: LogNews) => {
    for (const listener of listeners) listener(news);
  };

  const scheduleReconnect = () => {
    if (closed || listeners.size === 0 || reconnect) return;
    const delay = Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.min(failures, 16));
    failures++;
    reconnect = setTimeout(() => {
      reconnect = null;
      void connect();
    }, delay);
    reconnect.unref();
  };

  const connect = async () => {
    if (closed || listeners.size === 0 || client) return;
    // Keep-alive: a connection cut without a FIN (a network partition) is noticed, not waited on forever.
    const c = new pg.Client({ connectionString, keepAlive: true });
    client = c;
    let dropped = false;
    const drop = (error: unknown) => {
      if (dropped) return;
      dropped = true;
      if (client === c) client = null;
      void c.end().catch(() => undefined);
      if (closed || listeners.size === 0) return;
      tell({ kind: 'lost', error: messageOf(error) });
      scheduleReconnect();
    };
    c.on('error', drop);
    c.on('end', () => drop(new Error('the notification connection closed')));
    c.on('notification', (message) => {
      if (message.channel === APPENDED_CHANNEL && message.payload)
        tell({ kind: 'committed', transactionId: message.payload });
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${APPENDED_CHANNEL}`);
    } catch (error) {
      drop(error);
      return;
    }
    if (dropped) return;
    failures = 0;
    tell({ kind: 'listening' });
  };

  const stopConnection = async () => {
    if (reconnect) clearTimeout(reconnect);
    reconnect = null;
    const c = client;
    client = null;
    if (!c) return;
    // Ended on purpose: not a drop to report nor to reconnect after.
    c.removeAllListeners('end');
    c.removeAllListeners('error');
    c.on('error', () => undefined);
    await c.end().catch(() => undefined);
  };

  return {
    follow: (listener: (news: LogNews) => void) => {
      listeners.add(listener);
      void connect();
      return async () => {
        listeners.delete(listener);
        if (listeners.size === 0) await stopConnection();
      };
    },
    close: async () => {
      closed = true;
      listeners.clear();
      await stopConnection();
    },
  };
};
