import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { READ_MODEL_BLOCK_SIZE } from '../../src/duckdb/writer';
import { startTestApp, type TestApp } from '../support/app';

/** The block size a DuckDB file was made with, read with the file closed by everyone else. */
const blockSizeOf = async (file: string): Promise<number> => {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const c = await instance.connect();
    const rows = (await c.runAndReadAll('PRAGMA database_size')).getRowObjectsJS();
    c.closeSync();
    return Number(rows[0]!.block_size);
  } finally {
    instance.closeSync();
  }
};

const projectNames = async (t: TestApp) =>
  ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map((p) => p.name).sort();

describe('the read model file', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('is made with 64 KiB blocks, so a small table takes a small block', async () => {
    // Given a new data directory / when the service starts and writes / then its file's blocks are 64 KiB.
    t = await startTestApp('sqlite');
    await t.http.post('/api/projects').send({ name: 'small_tables' }).expect(201);
    expect(await projectNames(t)).toEqual(['mindsdb', 'small_tables']);
    const file = path.join(t.config.dataDir, 'projections.duckdb');
    await t.stop();
    expect(READ_MODEL_BLOCK_SIZE).toBe(65_536);
    expect(await blockSizeOf(file)).toBe(READ_MODEL_BLOCK_SIZE);
  });

  it('made before with 256 KiB blocks, keeps them and serves as before', async () => {
    // Given a read model file made with DuckDB's own default (as every file made before this change)
    t = await startTestApp('sqlite');
    await t.http.post('/api/projects').send({ name: 'before' }).expect(201);
    const file = path.join(t.config.dataDir, 'older.duckdb');
    const older = await DuckDBInstance.create(file, { default_block_size: '262144' });
    older.closeSync();
    // When the service restarts on it (an empty file: the read model is rebuilt from the log into it)
    t = await t.restart({ DUCKDB_FILE: file });
    await t.http.post('/api/projects').send({ name: 'after' }).expect(201);
    // Then it answers from the log's every event, and the file keeps its blocks.
    expect(await projectNames(t)).toEqual(['after', 'before', 'mindsdb']);
    await t.stop();
    expect(await blockSizeOf(file)).toBe(262_144);
  });
});
