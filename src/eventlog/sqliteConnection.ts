import type { SQLiteConnection } from '@event-driven-io/emmett-sqlite';
import sqlite3 from 'sqlite3';

type Values = Parameters<SQLiteConnection['command']>[1];

/** Most statements kept prepared (the grouped writes' texts differ by their number of rows). */
const MAX_KEPT = 64;

/**
 * Whether a text's statement may be kept: one whose run steps it to its end. `all` steps every
 * statement to its end; `run` steps once, which ends a write without RETURNING and a transaction's
 * BEGIN, COMMIT or ROLLBACK, and nothing else for certain. Schema statements are run once: not kept.
 */
const keepable = (sql: string, how: 'all' | 'run') =>
  how === 'all'
    ? /^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(sql)
    : /^\s*(BEGIN|COMMIT|ROLLBACK|INSERT|UPDATE|DELETE)\b/i.test(sql) && !/\bRETURNING\b/i.test(sql);

/** Prepared statements by their text, the least recently used finalized past `MAX_KEPT`. */
const keptStatements = (db: sqlite3.Database) => {
  type Kept = { readonly ready: Promise<sqlite3.Statement>; prepared?: sqlite3.Statement; dropped?: true };
  const statements = new Map<string, Kept>();
  /**
   * Finalizes a statement once prepared: after this turn of the event loop, so a caller that was
   * just handed it runs it first (sqlite3 finalizes after what is queued on the statement), or at
   * once (`now`, closing: nothing runs then).
   */
  const finalize = (kept: Kept, now = false) => {
    kept.dropped = true;
    const prepared = kept.prepared;
    if (prepared && now) prepared.finalize();
    else if (prepared) setImmediate(() => prepared.finalize());
  };
  return {
    statement: (sql: string): Promise<sqlite3.Statement> => {
      const known = statements.get(sql);
      if (known) {
        statements.delete(sql);
        statements.set(sql, known);
        return known.ready;
      }
      const kept: Kept = {
        ready: new Promise<sqlite3.Statement>((resolve, reject) => {
          const statement: sqlite3.Statement = db.prepare(sql, (error: Error | null) => {
            if (error) {
              // A text that does not prepare is not kept (the error goes to the caller).
              if (statements.get(sql) === kept) statements.delete(sql);
              return reject(error);
            }
            kept.prepared = statement;
            // Dropped while it was being prepared: used this once, then finalized.
            if (kept.dropped) setImmediate(() => statement.finalize());
            resolve(statement);
          });
        }),
      };
      statements.set(sql, kept);
      if (statements.size > MAX_KEPT) {
        const [oldest, least] = statements.entries().next().value as [string, Kept];
        statements.delete(oldest);
        finalize(least);
      }
      return kept.ready;
    },
    /** After an error: the statement is prepared again next time. */
    drop: (sql: string) => {
      const kept = statements.get(sql);
      if (!kept) return;
      statements.delete(sql);
      finalize(kept);
    },
    finalizeAll: () => {
      for (const kept of statements.values()) finalize(kept, true);
      statements.clear();
    },
  };
};

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
 *
 * The statements an append and a read run again and again (BEGIN, COMMIT, the grouped writes, the
 * page reads) are prepared once and kept (`kept`): sqlite3's `db.all(sql)` prepares, runs and
 * finalizes, three trips through libuv's thread pool and back to the main thread, where a kept
 * statement's run is one. Each run binds afresh (sqlite3 resets the statement first) and steps to
 * the end, so a kept statement is never left in progress; closing finalizes them first.
 */
export const openSqliteConnection = async (fileName: string): Promise<SQLiteConnection> => {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const opened: sqlite3.Database = new sqlite3.Database(
      fileName,
      sqlite3.OPEN_URI | sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE | sqlite3.OPEN_FULLMUTEX,
      (error) => (error ? reject(error) : resolve(opened)),
    );
  });
  const kept = keptStatements(db);
  const all = async <T>(sql: string, values: Values = []) => {
    const statement = keepable(sql, 'all') ? await kept.statement(sql) : null;
    return new Promise<T[]>((resolve, reject) => {
      const done = (error: Error | null, rows: unknown[]) => {
        if (!error) return resolve(rows as T[]);
        if (statement) kept.drop(sql);
        reject(error);
      };
      if (statement) statement.all(values, done);
      else db.all(sql, values, done);
    });
  };
  const run = async (sql: string, values: Values = []) => {
    const statement = keepable(sql, 'run') ? await kept.statement(sql) : null;
    return new Promise<sqlite3.RunResult>((resolve, reject) => {
      const done = function (this: sqlite3.RunResult, error: Error | null) {
        if (!error) return resolve({ lastID: this.lastID, changes: this.changes } as sqlite3.RunResult);
        if (statement) kept.drop(sql);
        reject(error);
      };
      if (statement) statement.run(values, done);
      else db.run(sql, values, done);
    });
  };
  // WAL: readers of other processes (e.g. a backup) do not block the writer, and commits are cheaper.
  await all('PRAGMA journal_mode = WAL');
  db.configure('busyTimeout', 5000);

  let nesting = 0;
  return {
    close: () => {
      // sqlite3 refuses to close a database whose statements are not finalized.
      kept.finalizeAll();
      db.close();
    },
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
