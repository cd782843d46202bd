import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { onFreshApp } from '../support/world';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-uploads-'));
const write = (name: string, content: string) => {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, content);
  return file;
};
const blobsOf = (t: TestApp) => fs.readdirSync(path.join(t.config.dataDir, 'files', 'blobs')).sort();
const blobCount = (t: TestApp) => blobsOf(t).length;
const eventCount = async (t: TestApp) =>
  (await t.http.get('/api/events?limit=10000').expect(200)).body.events.length as number;

const WIDE_FILES = { FILE_MAX_COLUMNS: '1024' };

describe.each(storeKinds)('uploads that must never break the service (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, WIDE_FILES);
  });
  afterAll(async () => t.dispose());

  it('given a JSON key that cannot be a column name, when uploaded, then 400 names it and the log is untouched', async () => {
    const before = await eventCount(t);
    const blobsBefore = blobsOf(t);

    const res = await t.http.put('/api/files/poison').attach('file', write('poison.json', '[{"":1}]'));

    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toMatch(/empty/);
    expect(await eventCount(t)).toBe(before);
    expect(blobsOf(t)).toEqual(blobsBefore);
  });

  it('given nested objects with unnamed fields, when uploaded and the read model rebuilt, then the file loads the same, as JSON', async () => {
    // The test restarts its app: one of its own.
    await onFreshApp(
      kind,
      async (app) => {
        const file = write(
          'nested.json',
          '[{"a":{"":1},"b":{"k y":[1,2]},"n":3},{"a":{"":2},"b":null,"n":4}]',
        );
        await app.http.put('/api/files/nested').attach('file', file).expect(200);
        const query = 'SELECT a, b, n FROM files.nested ORDER BY n';
        const live = await querySql(app, query);
        expect(live.type).toBe('table');
        expect(live.data).toHaveLength(2);
        expect(JSON.parse(live.data![0]![0] as string)).toEqual({ '': 1 });
        expect(live.data![0]![2]).toBe(3);
        // Writes still work (the runner is not stuck on the upload's event)…
        await app.http.post('/api/projects').send({ name: 'after_nested' }).expect(201);

        // …and a rebuild from the log loads it again, identically.
        const rebuilt = await app.restart({ DUCKDB_FILE: ':memory:' });
        try {
          expect(await querySql(rebuilt, query)).toEqual(live);
        } finally {
          await rebuilt.stop();
        }
      },
      WIDE_FILES,
    );
  });

  it('given 2,000 columns, when uploaded, then 400 names the limit; given 1,000, then it loads with types', async () => {
    const header = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(',');
    const row = (n: number, v: string) => Array.from({ length: n }, () => v).join(',');
    const wide = write('wide.csv', `${header(2000)}\n${row(2000, '1')}\n`);
    const res = await t.http.put('/api/files/wide').attach('file', wide);
    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toMatch(/2000 columns; at most 1024/);

    const ok = write('ok.csv', `${header(1000)}\n${row(1000, '1')}\n${row(1000, '2.5')}\n`);
    const body = (await t.http.put('/api/files/ok').attach('file', ok).expect(200)).body;
    expect(body).toBeDefined();
    const a = await querySql(t, 'SELECT c0, c999 FROM files.ok ORDER BY c0');
    expect(a).toMatchObject({
      column_types: ['DOUBLE', 'DOUBLE'],
      data: [
        [1, 1],
        [2.5, 2.5],
      ],
    });
  }, 60_000);

  it('given 20 rejected uploads, when they are refused, then no blob is left behind', async () => {
    const blobsBefore = blobCount(t);
    for (let i = 0; i < 20; i++) {
      const res = await t.http
        .put(`/api/files/bad_${i}`)
        .attach('file', write(`bad_${i}.json`, `[{"x": ${i}`));
      expect(res.status).toBe(400);
    }
    expect(blobCount(t)).toBe(blobsBefore);
    expect(fs.readdirSync(path.join(t.config.dataDir, 'files', 'incoming'))).toEqual([]);
  });
});
