/**
 * The SQLite log's connection keeps the statements it runs again and again prepared
 * (src/eventlog/sqliteConnection.ts, `keptStatements`). The promise: every query answers what a
 * connection of its own reads, past the number of statements kept (the least recently used are
 * finalized and prepared again), after a statement failed, in transactions committed and rolled
 * back; a write that answers rows (`RETURNING`) run as a command leaves no statement in progress
 * that would stop the COMMIT; and closing finalizes them all, so the database closes (SQLite then
 * removes its WAL file).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { openSqliteConnection } from '../../src/eventlog/sqliteConnection';

type Row = { k: number; v: string };

/**
 * What a connection of its own reads (sqlite3's own, statements prepared once each), answered once
 * that connection has closed: a read-only connection still closing when the log's connection closes
 * is the last to close, and cannot checkpoint the WAL, which then stays (CI on 28708fe, loaded).
 */
const readAlone = (file: string, sql: string, values: (string | number)[] = []) =>
  new Promise<Row[]>((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (error) => {
      if (error) return reject(error);
      db.all(sql, values, (e, rows) =>
        db.close((closing) => {
          const failed = e ?? closing;
          return failed ? reject(failed) : resolve(rows as Row[]);
        }),
      );
    });
  });

const closed = async (file: string) => {
  // A clean close of the last connection checkpoints the WAL and removes its file.
  for (let i = 0; i < 200 && fs.existsSync(`${file}-wal`); i++) await new Promise((r) => setTimeout(r, 25));
  return !fs.existsSync(`${file}-wal`);
};

describe('the SQLite connection keeps its statements prepared', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-kept-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers as a connection of its own, past the statements kept, after a failure and a rollback, and closes', async () => {
    const file = path.join(dir, 'log.sqlite');
    const c = await openSqliteConnection(file);
    await c.command('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    // 150 texts of their own (more than are kept), each run twice, interleaved with one read text.
    for (let i = 0; i < 150; i++) {
      const text = `INSERT INTO t (k, v) VALUES ${Array.from({ length: (i % 75) + 1 }, () => '(?, ?)').join(', ')}`;
      const rows = Array.from({ length: (i % 75) + 1 }, (_, j) => [i * 1000 + j, `v${i}-${j}`]);
      await c.withTransaction(() => c.command(text, rows.slice(0, (i % 75) + 1).flat()));
      const read = await c.query<Row>('SELECT k, v FROM t WHERE k >= ? ORDER BY k', [i * 1000]);
      expect(read).toEqual(await readAlone(file, 'SELECT k, v FROM t WHERE k >= ? ORDER BY k', [i * 1000]));
      expect(read.map((r) => r.v)).toEqual(rows.map((r) => r[1]));
    }
    const everything = 'SELECT k, v FROM t ORDER BY k';
    expect(await c.query<Row>(everything)).toEqual(await readAlone(file, everything));

    // A kept statement that fails (a key taken) reports it, and its text runs again afterwards.
    const one = 'INSERT INTO t (k, v) VALUES (?, ?)';
    await c.command(one, [-1, 'first']);
    await expect(c.command(one, [-1, 'again'])).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT' });
    expect((await c.command(one, [-2, 'second'])).changes).toBe(1);

    // Rolled back: nothing of it stays; the same statements then commit.
    await expect(
      c.withTransaction(async () => {
        await c.command(one, [-3, 'rolled back']);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await c.withTransaction(() => c.command(one, [-4, 'committed']));
    const negative = 'SELECT k, v FROM t WHERE k < 0 ORDER BY k';
    expect(await c.query<Row>(negative)).toEqual([
      { k: -4, v: 'committed' },
      { k: -2, v: 'second' },
      { k: -1, v: 'first' },
    ]);
    expect(await readAlone(file, negative)).toEqual(await c.query<Row>(negative));

    // A write answering rows, run as a command (one step), is not kept open: the COMMIT goes through.
    await c.withTransaction(async () => {
      await c.command('INSERT INTO t (k, v) VALUES (?, ?), (?, ?) RETURNING k', [-5, 'a', -6, 'b']);
      await c.command('UPDATE t SET v = ? WHERE k IN (?, ?) RETURNING k', ['c', -5, -6]);
    });
    expect(await readAlone(file, 'SELECT k, v FROM t WHERE k <= -5 ORDER BY k')).toEqual([
      { k: -6, v: 'c' },
      { k: -5, v: 'c' },
    ]);

    c.close();
    expect(await closed(file)).toBe(true);
    expect(await readAlone(file, "SELECT count(*) AS k, '' AS v FROM t")).toEqual([
      { k: (await readAlone(file, everything)).length, v: '' },
    ]);
  });
});
