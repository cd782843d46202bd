import { isOutOfMemoryMessage } from '../../duckdb/errors';
import type { ShadowReply, ShadowRequest } from './shadowCatalog';
import { CatalogRefusal } from './shadowCatalog';
import { ShadowDatabase, type ShadowDatabaseOptions } from './shadowDatabase';
import { messageOf } from '../../shared/errors';

/**
 * A catalog shadow's process (forked by ShadowCatalog): one DuckDB, one query at a time, asked and
 * answered over the IPC channel. Its parent kills it when a query outlives its deadline or grows it
 * past its memory; it ends by itself when its parent has gone.
 */
const send = (reply: ShadowReply) => process.send?.(reply);

const options = JSON.parse(process.argv[2] ?? '{}') as ShadowDatabaseOptions;
const db = new ShadowDatabase(options);

/** What went wrong, in the words the parent tells its client. */
const failure = (id: number, error: unknown): ShadowReply => {
  const message = messageOf(error);
  if (error instanceof CatalogRefusal) return { type: 'failed', id, kind: 'refusal', message };
  if (/^INTERRUPT Error/.test(message)) return { type: 'failed', id, kind: 'interrupted', message };
  if (isOutOfMemoryMessage(message)) return { type: 'failed', id, kind: 'memory', message };
  return { type: 'failed', id, kind: 'error', message };
};

process.on('message', (m: ShadowRequest) => {
  if (m.type === 'interrupt') {
    db.interrupt();
    return;
  }
  db.answer(m.sql, m.params, m.listing, m.database, () =>
    send({ type: 'running', id: m.id, rss: process.memoryUsage.rss() }),
  ).then(
    (answer) => send({ type: 'answer', id: m.id, answer }),
    (error: unknown) => send(failure(m.id, error)),
  );
});
// The parent gone (or closing the channel): nothing more will be asked.
process.on('disconnect', () => {
  void db.close().finally(() => process.exit(0));
});

db.open().then(
  () => send({ type: 'ready', rss: process.memoryUsage.rss() }),
  (error: unknown) => {
    send({ type: 'failed', id: 0, kind: 'error', message: (error as Error).message });
    process.exit(1);
  },
);
