import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import type { StoreKind, TestApp } from './app';

/**
 * Every stored event's data and metadata, as text, read with the store's own client; on SQLite the
 * files' bytes too: a page SQLite freed or a WAL frame still holding a plaintext would show there.
 */
export const storedLog = async (store: StoreKind, t: TestApp): Promise<string> => {
  if (store === 'postgres') {
    const client = new pg.Client({ connectionString: t.config.eventStoreUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ d: string; m: string }>(
        'SELECT message_data::text AS d, message_metadata::text AS m FROM emt_messages ORDER BY global_position',
      );
      return rows.map((r) => `${r.d}\n${r.m}`).join('\n');
    } finally {
      await client.end();
    }
  }
  const db = new sqlite3.Database(path.join(t.config.dataDir, 'events.sqlite'));
  const rows = await new Promise<{ d: string; m: string }[]>((resolve, reject) =>
    db.all(
      'SELECT message_data AS d, message_metadata AS m FROM emt_messages ORDER BY global_position',
      (err, r: { d: string; m: string }[]) => (err ? reject(err) : resolve(r)),
    ),
  );
  await new Promise<void>((resolve) => db.close(() => resolve()));
  const files = ['events.sqlite', 'events.sqlite-wal']
    .map((f) => path.join(t.config.dataDir, f))
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString('latin1'));
  return [...rows.map((r) => `${r.d}\n${r.m}`), ...files].join('\n');
};
