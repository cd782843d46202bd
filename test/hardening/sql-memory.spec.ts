/**
 * DuckDB ran with its own defaults (80% of the machine's memory, spilling next to the database
 * file or nowhere): ten heavy queries took 5 GB. It now has a memory_limit (DUCKDB_MEMORY_LIMIT,
 * a fifth of the memory by default since issue 35) and spills under DATA_DIR. Its IO errors name files by absolute
 * path: no path of the server reaches a client.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { onFreshApp } from '../support/world';

const SMALL_MEMORY = { DUCKDB_MEMORY_LIMIT: '96MiB', DUCKDB_THREADS: '1', SQL_TIMEOUT_MS: '60000' };

describe('DuckDB memory and spilling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', SMALL_MEMORY);
  });
  afterAll(() => t.dispose());

  it('given a memory limit, then DuckDB runs with it and spills under DATA_DIR', async () => {
    const [settings] = await t.running.ctx.duck.query(
      "SELECT current_setting('memory_limit') AS m, current_setting('temp_directory') AS d",
    );
    expect(settings).toEqual({ m: '96.0 MiB', d: path.join(t.config.dataDir, 'duckdb.tmp') });
    expect(fs.statSync(path.join(t.config.dataDir, 'duckdb.tmp')).isDirectory()).toBe(true);
  });

  it('given a sort larger than the limit, when it runs, then it spills and answers', async () => {
    const a = await querySql(
      t,
      "SELECT count(*) AS n FROM (SELECT repeat('x', 50) || range AS s FROM range(3000000) ORDER BY s)",
    );
    expect(a).toMatchObject({ type: 'table', data: [[3_000_000]] });
  }, 60_000);

  it('given a result that cannot spill, when it outgrows the limit, then it is an error, not the memory of the process', async () => {
    const a = await querySql(t, 'SELECT len(list(range)) AS n FROM range(100000000)');
    // A limit of the server's (1153), not the engine failing (1105): issue 35.
    expect(a).toMatchObject({ type: 'error', error_code: 1153 });
    // DuckDB's own refusal, or the watch stopping it first to keep room for writes (database.ts).
    expect(a.error_message).toMatch(
      /Out of Memory|^The query was stopped to keep room for writes: .* of DUCKDB_MEMORY_LIMIT \(96 MiB\)$/,
    );
  }, 60_000);

  it('given the spill directory broken, when a query must spill, then the error names no server path', async () => {
    // The test breaks its app's spill directory: an app of its own.
    await onFreshApp(
      'sqlite',
      async (app) => {
        // Broken before anything spilled: the sort must make its first temporary file there. (After a
        // spill DuckDB keeps its temporary files open, and a later sort may not touch the
        // directory at all.)
        const spill = path.join(app.config.dataDir, 'duckdb.tmp');
        fs.rmSync(spill, { recursive: true, force: true });
        fs.writeFileSync(spill, 'not a directory');

        const a = await querySql(
          app,
          "SELECT count(*) FROM (SELECT repeat('y', 50) || range AS s FROM range(3000000) ORDER BY s)",
        );

        // DuckDB names the directory it could not use: shown as `<server path>`, never the path.
        expect(a.type).toBe('error');
        expect(a.error_message).toContain('<server path>');
        expect(a.error_message).not.toContain(app.config.dataDir);
        expect(a.error_message).not.toMatch(/\/tmp\//);
      },
      SMALL_MEMORY,
    );
  }, 60_000);

  it('given no DUCKDB_MEMORY_LIMIT, then a fifth of the memory is the limit; a share or a size may be given', () => {
    expect(loadConfig({}).duckdbMemoryLimit).toMatch(/^\d+MiB$/);
    expect(loadConfig({ DUCKDB_MEMORY_LIMIT: '2GB' }).duckdbMemoryLimit).toBe('2GB');
    expect(() => loadConfig({ DUCKDB_MEMORY_LIMIT: 'plenty' })).toThrow(/DUCKDB_MEMORY_LIMIT/);
    const fifth = Number(/^(\d+)MiB$/.exec(loadConfig({}).duckdbMemoryLimit)![1]);
    const tenth = Number(/^(\d+)MiB$/.exec(loadConfig({ DUCKDB_MEMORY_LIMIT: '10%' }).duckdbMemoryLimit)![1]);
    expect(Math.abs(fifth - 2 * tenth)).toBeLessThanOrEqual(2);
  });
});
