import crypto from 'node:crypto';
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
import { onFreshApp } from '../support/world';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-blobs-'));
const write = (name: string, content: string) => {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, content);
  return file;
};

/** The sha256 of a file's bytes: the digest its blob is stored under. */
const digestOf = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

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

/** The blobs stored are exactly `digests`, on disk and (when the log is there) in PostgreSQL. */
const expectBlobs = async (t: TestApp, digests: Iterable<string>) => {
  const expected = [...new Set(digests)].sort();
  const { onDisk, inPostgres } = await storedBlobs(t);
  expect([...onDisk].sort()).toEqual(expected);
  if (inPostgres) expect([...inPostgres].sort()).toEqual(expected);
};

type LoggedEvent = { type: string; data: Record<string, unknown> };
const eventsOf = async (t: TestApp) =>
  (await t.http.get('/api/events?limit=10000').expect(200)).body.events as LoggedEvent[];
/** The FileBlobReleased events of the given blobs (a test's own bytes). */
const releasesOf = async (t: TestApp, digests: readonly string[]) =>
  (await eventsOf(t)).filter(
    (e) => e.type === 'FileBlobReleased' && digests.includes(e.data.digest as string),
  );

/** Small enough that an upload with long column names breaks it: a refusal after the bytes are stored. */
const SMALL_EVENTS = { MAX_EVENT_BYTES: '2048' };
const longNames = Array.from({ length: 30 }, (_, i) => `column_with_a_rather_long_name_${i}`);
/** A CSV whose FileUploaded event is over MAX_EVENT_BYTES: refused after its bytes are stored. */
const tooWideCsv = (name: string, value: number) =>
  write(`${name}.csv`, `${longNames.join(',')}\n${longNames.map(() => value).join(',')}\n`);

describe.each(storeKinds)('uploaded bytes no file uses are not kept (%s)', (kind) => {
  // Every test uploads bytes of its own and asserts on their digests, beside what the others stored.
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, SMALL_EVENTS);
  });
  afterAll(async () => t.dispose());

  it('given 20 refused uploads, then no blob is left, on disk or in PostgreSQL', async () => {
    const before = (await storedBlobs(t)).onDisk;
    const uploads: string[] = [];

    for (let i = 0; i < 20; i++) {
      const upload =
        i % 4 === 0
          ? tooWideCsv(`refused_${i}`, i)
          : i % 4 === 1
            ? write(`refused_${i}.json`, `[{"x": ${i}`)
            : i % 4 === 2
              ? write(`refused_${i}.json`, `[{"": ${i}}]`)
              : write(`refused_${i}.json`, `[{"k": ${i}, "K": 1}]`);
      uploads.push(upload);
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

    await expectBlobs(t, before);
    const events = await eventsOf(t);
    expect(
      events.filter((e) => e.type === 'FileUploaded' && String(e.data.name).startsWith('refused_')),
    ).toEqual([]);
    // Refused after its bytes were stored: the claim is given up and the bytes released.
    expect(await releasesOf(t, uploads.map(digestOf))).toHaveLength(5);
  });

  it('given two files with the same bytes, when one is deleted, then the bytes stay; when both are, they go', async () => {
    const before = [...(await storedBlobs(t)).onDisk];
    const same = write('same.csv', 'a,b\n10,20\n');
    const other = write('other.csv', 'c\n3\n');
    const other2 = write('other2.csv', 'c\n4\n');
    await t.http.put('/api/files/first').attach('file', same).expect(200);
    await t.http.put('/api/files/second').attach('file', same).expect(200);
    await t.http.put('/api/files/other').attach('file', other).expect(200);
    await expectBlobs(t, [...before, digestOf(same), digestOf(other)]);

    await t.http.delete('/api/files/first').expect(200);
    await expectBlobs(t, [...before, digestOf(same), digestOf(other)]);
    expect((await querySql(t, 'SELECT a, b FROM files.second')).data).toEqual([[10, 20]]);

    await t.http.delete('/api/files/second').expect(200);
    await expectBlobs(t, [...before, digestOf(other)]);

    // Replacing a file's bytes releases the old ones.
    await t.http.put('/api/files/other').attach('file', other2).expect(200);
    await expectBlobs(t, [...before, digestOf(other2)]);
    expect((await querySql(t, 'SELECT c FROM files.other')).data).toEqual([[4]]);

    expect(await releasesOf(t, [same, other, other2].map(digestOf))).toHaveLength(2);
  });

  it('given released bytes, when the read model is rebuilt from the log, then every live file loads and nothing fails', async () => {
    // The test restarts its app: one of its own.
    await onFreshApp(
      kind,
      async (app) => {
        const same = write('rebuilt_same.csv', 'a,b\n11,21\n');
        await app.http.put('/api/files/first').attach('file', same).expect(200);
        await app.http.put('/api/files/second').attach('file', same).expect(200);
        await app.http
          .put('/api/files/other')
          .attach('file', write('rebuilt_other.csv', 'c\n3\n'))
          .expect(200);
        await app.http.delete('/api/files/first').expect(200);
        await app.http.delete('/api/files/second').expect(200);
        await app.http
          .put('/api/files/other')
          .attach('file', write('rebuilt_other2.csv', 'c\n4\n'))
          .expect(200);
        await app.http.put('/api/files/refused').attach('file', tooWideCsv('rebuilt_refused', 1)).expect(400);
        const before = await querySql(app, 'SELECT c FROM files.other');

        const rebuilt = await app.restart({ DUCKDB_FILE: ':memory:' });
        try {
          expect((await rebuilt.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
          expect(await querySql(rebuilt, 'SELECT c FROM files.other')).toEqual(before);
          expect((await querySql(rebuilt, 'SELECT * FROM files.first')).error_code).toBe(1146);
          const names = ((await rebuilt.http.get('/api/files').expect(200)).body as { name: string }[]).map(
            (f) => f.name,
          );
          expect(names).toEqual(['other']);
        } finally {
          await rebuilt.stop();
        }
      },
      SMALL_EVENTS,
    );
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
      await expectBlobs(b, [digestOf(same)]);
      const { inPostgres } = await storedBlobs(a);
      expect(inPostgres!.size).toBe(1);

      await b.http.delete('/api/files/on_b').expect(200);
      await expectBlobs(b, []);
      // The other process drops its own (cached) copy when it starts again.
      a = await a.restart();
      cluster.apps[0] = a;
      await expectBlobs(a, []);
      expect((await a.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
    } finally {
      await cluster.dispose();
    }
  });
});
