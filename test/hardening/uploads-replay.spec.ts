import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { problemOf, querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-replay-'));

/** Names DuckDB, SQL and JSON each find awkward: case twins, quotes, reserved words, empty, NUL. */
const awkwardName = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('a', 'A', 'b c', '"q', "x'y", 'é', 'json', 'column0', '1', 'select', ' lead'),
  },
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 4 }) },
  // Refused as column names (400), fine inside nested values.
  { weight: 1, arbitrary: fc.constantFrom('', 'a\u0000b') },
);
const scalar = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('2024-01-02', '2024-01-02 03:04:05', '640,56', '1e3', 'true', ''),
);
const jsonValue = fc.oneof(
  scalar,
  fc.dictionary(awkwardName, scalar, { maxKeys: 3 }),
  fc.array(scalar, { maxLength: 3 }),
);
const jsonRecord = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(awkwardName, jsonValue, { maxKeys: 4 }) },
  { weight: 1, arbitrary: scalar },
);
const jsonFile = fc
  .record({
    layout: fc.constantFrom('json', 'ndjson'),
    rows: fc.array(jsonRecord, { minLength: 1, maxLength: 6 }),
  })
  .map(({ layout, rows }) => ({
    ext: layout,
    text: layout === 'json' ? JSON.stringify(rows) : rows.map((r) => JSON.stringify(r)).join('\n'),
  }));

const cell = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true }).map(String),
  fc.constantFrom('true', 'false', '', '2024-01-02', '640,56', 'NULL', '"', ' 7 '),
  fc.string({ maxLength: 5 }),
);
const quoted = (v: string, delimiter: string) =>
  v.includes(delimiter) || /["\n\r]/.test(v) || v !== v.trim() ? `"${v.replace(/"/g, '""')}"` : v;
const csvFile = fc.integer({ min: 1, max: 4 }).chain((width) =>
  fc
    .record({
      delimiter: fc.constantFrom(',', ';', '\t'),
      header: fc.array(awkwardName, { minLength: width, maxLength: width }),
      rows: fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 6 }),
    })
    .map(({ delimiter, header, rows }) => ({
      ext: delimiter === '\t' ? 'tsv' : 'csv',
      text:
        [header, ...rows].map((r) => r.map((v) => quoted(v, delimiter)).join(delimiter)).join('\n') + '\n',
    })),
);

/** What a file's table holds, independent of the order rows come back in. */
const contentOf = (answer: SqlAnswer) => ({
  type: answer.type,
  column_names: answer.column_names,
  column_types: answer.column_types,
  rows: (answer.data ?? []).map((r) => JSON.stringify(r)).sort(),
});

const blobCount = (t: TestApp) => fs.readdirSync(path.join(t.config.dataDir, 'files', 'blobs')).length;

describe.each(storeKinds)('every file an upload accepts loads the same on replay (%s)', (kind) => {
  // An app per test: the property rebuilds the read model at each of its runs, and each rebuild
  // loaded again every file the app held, the first test's 30,001 rows among them.
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.dispose());

  it('given a JSON file whose late values do not fit the type of the early ones, then it loads, and again on replay', async () => {
    const rows: unknown[] = Array.from({ length: 30_000 }, (_, i) => ({ n: i }));
    rows.push({ n: 'not a number' });
    const file = path.join(scratch, 'late.json');
    fs.writeFileSync(file, JSON.stringify(rows));
    const res = await t.http.put('/api/files/late_values').attach('file', file).expect(200);
    expect(res.body).toMatchObject({ row_count: 30_001, column_types: { n: 'JSON' } });
    const query = `SELECT count(*), count(*) FILTER (WHERE CAST(n AS VARCHAR) = '"not a number"') FROM files.late_values`;
    const live = await querySql(t, query);
    expect(live.data).toEqual([[30_001, 1]]);
    await t.running.ctx.projections.rebuild();
    expect(await querySql(t, query)).toEqual(live);
  });

  it('given generated JSON, NDJSON, CSV and TSV files with awkward names and values, then each is refused with a 400 or loads identically after a rebuild', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(jsonFile, csvFile), async ({ ext, text }) => {
        const name = `gen_${run++}`;
        const file = path.join(scratch, `${name}.${ext}`);
        fs.writeFileSync(file, text);
        const blobsBefore = blobCount(t);
        const res = await t.http.put(`/api/files/${name}`).attach('file', file);
        if (res.status === 400) {
          expect(problemOf(res).detail).toEqual(expect.any(String));
          expect(blobCount(t)).toBe(blobsBefore);
          return;
        }
        expect(res.status).toBe(200);
        const live = await querySql(t, `SELECT * FROM files.${name}`);
        expect(live.type).toBe('table');
        expect(live.data).toHaveLength(res.body.row_count);
        await t.running.ctx.projections.rebuild();
        expect((await t.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
        expect(contentOf(await querySql(t, `SELECT * FROM files.${name}`))).toEqual(contentOf(live));
      }),
      { seed: 20261122, numRuns: 40, endOnFailure: true },
    );
  }, 120_000);
});
