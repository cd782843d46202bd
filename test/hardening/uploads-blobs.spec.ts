import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  problemOf,
  querySql,
  startPostgresCluster,
  startTestApp,
  storeKinds,
  type TestApp,
} from '../support/app';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-blobs-'));
const write = (name: string, content: string) => {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, content);
  return file;
};

/** Digests stored by this process on disk, and in PostgreSQL when the log is there. */
const storedBlobs = async (t: TestApp) => {
  const onDisk = new Set(
    fs.readdirSync(path.join(t.config.dataDir, 'files', 'blobs')).map((f) => f.split('.')[0]!),
  );
  if (!t.config.eventStoreUrl) return { onDisk, inPostgres: null };
  const client = new pg.Client({ connectionString: t.config.eventStoreUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ digest: string }>(
      'SELECT DISTINCT digest FROM mindledger_file_blobs',
    );
    return { onDisk, inPostgres: new Set(rows.map((r) => r.digest)) };
  } finally {
    await client.end();
  }
};

const expectBlobs = async (t: TestApp, count: number) => {
  const { onDisk, inPostgres } = await storedBlobs(t);
  expect(onDisk.size).toBe(count);
  if (inPostgres) expect([...inPostgres].sort()).toEqual([...onDisk].sort());
};

const eventsOf = async (t: TestApp) =>
  (await t.http.get('/api/events?limit=10000').expect(200)).body.events as {
    type: string;
    data: Record<string, unknown>;
  }[];

describe.each(storeKinds)('uploaded bytes no file uses are not kept (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // Small enough that an upload with long column names breaks it: a refusal after the bytes are stored.
    t = await startTestApp(kind, { MAX_EVENT_BYTES: '2048' });
  });
  afterAll(async () => t.dispose());

  it('given 20 refused uploads, then no blob is left, on disk or in PostgreSQL', async () => {
    const longNames = Array.from({ length: 30 }, (_, i) => `column_with_a_rather_long_name_${i}`);
    for (let i = 0; i < 20; i++) {
      const upload =
        i % 4 === 0
          ? write(`refused_${i}.csv`, `${longNames.join(',')}\n${longNames.map(() => i).join(',')}\n`)
          : i % 4 === 1
            ? write(`refused_${i}.json`, `[{"x": ${i}`)
            : i % 4 === 2
              ? write(`refused_${i}.json`, `[{"": ${i}}]`)
              : write(`refused_${i}.json`, `[{"k": ${i}, "K": 1}]`);
      const res = await t.http.put(`/api/files/refused_${i}`).attach('file', upload);
      expect(res.status).toBe(400);
      expect(problemOf(res).detail).toMatch(
        i % 4 === 0
          ? /MAX_EVENT_BYTES/
          : i % 4 === 1
            ? /cannot be read/
            : i % 4 === 2
              ? /empty/
              : /differ only in case/,
      );
    }
    await expectBlobs(t, 0);
    const types = (await eventsOf(t)).map((e) => e.type);
    expect(types).not.toContain('FileUploaded');
    // Refused after its bytes were stored: the claim is given up and the bytes released.
    expect(types.filter((type) => type === 'FileBlobReleased')).toHaveLength(5);
  });

  it('given two files with the same bytes, when one is deleted, then the bytes stay; when both are, they go', async () => {
    const same = write('same.csv', 'a,b\n10,20\n');
    await t.http.put('/api/files/first').attach('file', same).expect(200);
    await t.http.put('/api/files/second').attach('file', same).expect(200);
    await t.http.put('/api/files/other').attach('file', write('other.csv', 'c\n3\n')).expect(200);
    await expectBlobs(t, 2);

    await t.http.delete('/api/files/first').expect(200);
    await expectBlobs(t, 2);
    expect((await querySql(t, 'SELECT a, b FROM files.second')).data).toEqual([[10, 20]]);

    await t.http.delete('/api/files/second').expect(200);
    await expectBlobs(t, 1);

    // Replacing a file's bytes releases the old ones.
    await t.http.put('/api/files/other').attach('file', write('other2.csv', 'c\n4\n')).expect(200);
    await expectBlobs(t, 1);
    expect((await querySql(t, 'SELECT c FROM files.other')).data).toEqual([[4]]);

    const released = (await eventsOf(t)).filter((e) => e.type === 'FileBlobReleased');
    expect(released).toHaveLength(5 + 2);
  });

  it('given released bytes, when the read model is rebuilt from the log, then every live file loads and nothing fails', async () => {
    const before = await querySql(t, 'SELECT c FROM files.other');
    t = await t.restart({ DUCKDB_FILE: ':memory:' });
    expect((await t.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
    expect(await querySql(t, 'SELECT c FROM files.other')).toEqual(before);
    expect((await querySql(t, 'SELECT * FROM files.first')).error_code).toBe(1146);
    const names = ((await t.http.get('/api/files').expect(200)).body as { name: string }[]).map(
      (f) => f.name,
    );
    expect(names).toEqual(['other']);
  });
});

describe('bytes shared by files of two processes on one PostgreSQL log', () => {
  it('keeps the bytes while a file of the other process uses them, and removes them with the last one', async () => {
    const cluster = await startPostgresCluster(2);
    try {
      const b = cluster.apps[1]!;
      let a = cluster.apps[0]!;
      const same = write('shared.csv', 'x\n42\n');
      await a.http.put('/api/files/on_a').attach('file', same).expect(200);
      await b.http.put('/api/files/on_b').attach('file', same).expect(200);

      await a.http.delete('/api/files/on_a').expect(200);
      await expectBlobs(b, 1);
      const { inPostgres } = await storedBlobs(a);
      expect(inPostgres!.size).toBe(1);

      await b.http.delete('/api/files/on_b').expect(200);
      await expectBlobs(b, 0);
      // The other process drops its own (cached) copy when it starts again.
      a = await a.restart();
      cluster.apps[0] = a;
      await expectBlobs(a, 0);
      expect((await a.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
    } finally {
      await cluster.dispose();
    }
  });
});
