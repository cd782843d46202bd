import path from 'node:path';
import type { Clock } from '../shared/time';
import { openPostgresLog } from './postgres';
import { openSqliteLog } from './sqlite';
import type { EventLog } from './types';

/** EVENT_STORE_URL unset: a SQLite file in the data directory; postgres://…: the shared log. */
export const openEventLog = (options: { url?: string; dataDir: string; clock: Clock }): Promise<EventLog> => {
  const url = options.url;
  if (!url) return openSqliteLog(path.join(options.dataDir, 'events.sqlite'), options.clock);
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgresLog(url, options.clock);
  if (url.startsWith('sqlite:')) return openSqliteLog(url.slice('sqlite:'.length), options.clock);
  throw new Error(`EVENT_STORE_URL must be postgres://… or sqlite:<file>, got ${url.split(':')[0]}:…`);
};
