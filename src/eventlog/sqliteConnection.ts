import type { SQLiteConnection } from '@event-driven-io/emmett-sqlite';
import sqlite3 from 'sqlite3';

type Values = Parameters<SQLiteConnection['command']>[1];

/**
 * The connection Emmett's SQLite event store runs on, in place of Emmett's own `sqliteConnection`,
 * which leaves write statements open: it switches the file to WAL with a statement it neither
 * awaits nor steps to its end (`PRAGMA journal_mode` answers a row), and its `querySingle` (`get`)
 * runs the append's `INSERT … RETURNING` on the streams table for one row only. Until sqlite3
 * finalizes such a statement, a COMMIT on the connection fails with SQLITE_BUSY ("SQL statements in
 * progress"); the finalize waits its turn on libuv's thread pool, which DuckDB keeps busy, and CI saw
 * two services fail to start so. Here the pragmas are awaited before anything else runs, and every
 * query is stepped to its end (`all`, never `get`), so no statement stays open. Same methods and
 * transaction nesting as Emmett's (0.42); the log's queue (sqlite.ts) never runs two at once.
 */
export const openSqliteConnection = async (fileName: string): Promise<SQLiteConnection> => {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const opened: sqlite3.Database = new sqlite3.Database(
      fileName,
      sqlite3.OPEN_URI | sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE | sqlite3.OPEN_FULLMUTEX,
      (error) => (error ? reject(error) : resolve(opened)),
    );
  });
  const all = <T>(sql: string, values: Values = []) =>
    new Promise<T[]>((resolve, reject) =>
      db.all(sql, values, (error, rows) => (error ? reject(error) : resolve(rows as T[]))),
    );
  const run = (sql: string, values: Values = []) =>
    new Promise<sqlite3.RunResult>((resolve, reject) =>
      db.run(sql, values, function (this: sqlite3.RunResult, error) {
        if (error) reject(error);
        else resolve(this);
      }),
    );
  // WAL: readers of other processes (e.g. a backup) do not block the writer, and commits are cheaper.
  await all('PRAGMA journal_mode = WAL');
  db.configure('busyTimeout', 5000);

  let nesting = 0;
  return {
    close: () => db.close(),
    command: run,
    batchCommand: async (sqls) => {
      for (const sql of sqls) await run(sql);
    },
    query: all,
    querySingle: async <T>(sql: string, values?: Values) => (await all<T>(sql, values))[0] ?? null,
    withTransaction: async <T>(work: () => Promise<T>) => {
      if (nesting++ === 0) {
        try {
          await run('BEGIN IMMEDIATE TRANSACTION');
        } catch (error) {
          nesting--;
          throw error;
        }
      }
      try {
        const result = await work();
        if (nesting === 1) await run('COMMIT');
        nesting--;
        return result;
      } catch (error) {
        if (--nesting === 0) await run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
  };
};
