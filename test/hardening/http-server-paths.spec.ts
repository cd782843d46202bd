/**
 * Problem details named server paths: an unreadable upload answered
 * `… read_parquet('/srv/data/files/incoming/340e0d48-82c0…` (DuckDB quotes the file, cut short, so
 * replacing the exact path was not enough). The one error mapper now strips every server path from
 * every detail; these tests hold it to that on the reported case and on the stripping rules.
 */
import os from 'node:os';
import { registerServerPaths, stripServerPaths } from '../../src/http/serverPaths';
import { problemOf, startTestApp, type TestApp } from '../support/app';

const ABSOLUTE_PATH = /(^|[\s"'(=])\/(?!api\b|doc\b)[^\s"'/]+\/[^\s"']*/;

describe('problem details never name server paths', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t.dispose());

  const corruptParquet = Buffer.concat([
    Buffer.from('PAR1'),
    Buffer.alloc(100, 7),
    Buffer.from([10, 0, 0, 0]),
    Buffer.from('PAR1'),
  ]);

  it.each([
    ['a corrupt Parquet file', 'bad.parquet', corruptParquet],
    ['a Parquet file with a broken footer', 'bad2.parquet', Buffer.from(`PAR1${'x'.repeat(50)}PAR1`)],
    ['a CSV file DuckDB cannot sniff', 'bad.csv', Buffer.from('a,b\n1,"2\n')],
  ])('%s: 400 without DATA_DIR or any absolute path', async (_what, filename, bytes) => {
    const before = (await t.running.ctx.log.head()).events;
    const res = await t.http.put('/api/files/broken').attach('file', bytes, filename).expect(400);
    const { detail } = problemOf(res);
    expect(detail).toMatch(/cannot be read as/);
    expect(detail).not.toContain(t.config.dataDir);
    expect(detail).not.toContain(os.tmpdir());
    expect(detail).not.toContain('/files/incoming');
    expect(detail).not.toMatch(ABSOLUTE_PATH);
    // Refused: nothing recorded.
    expect((await t.running.ctx.log.head()).events).toBe(before);
  });
});

describe('stripServerPaths', () => {
  beforeAll(() => registerServerPaths(['/srv/mindledger/data/']));

  it('replaces a registered directory and what follows it by <server path>/last', () => {
    expect(stripServerPaths('IO Error: "/srv/mindledger/data/files/blobs/ab12.parquet" failed')).toBe(
      'IO Error: "<server path>/ab12.parquet" failed',
    );
    expect(stripServerPaths("read_parquet('/srv/mindledger/data/files/incoming/340e0d48-82c0...")).toBe(
      "read_parquet('<server path>/340e0d48-82c0...",
    );
    expect(stripServerPaths('at /srv/mindledger/data')).toBe('at <server path>');
  });

  it('matches whole components only (…/database is not under …/data)', () => {
    expect(stripServerPaths('/srv/mindledger/database is a name')).toBe('<server path>/database is a name');
    expect(stripServerPaths('no path here: srv/mindledger/data')).toBe('no path here: srv/mindledger/data');
  });

  it('replaces other absolute paths too', () => {
    expect(stripServerPaths('cannot open /etc/passwd')).toBe('cannot open <server path>/passwd');
    expect(stripServerPaths('(/home/u/.cache/x.db)')).toBe('(<server path>/x.db)');
    expect(stripServerPaths('file=C:\\Users\\me\\data\\x.csv')).toBe('file=<server path>/x.csv');
    expect(stripServerPaths(`in ${process.cwd()}/src/app.ts:12`)).toBe('in <server path>/app.ts:12');
  });

  it("keeps this API's paths, URLs, MIME types and plain words", () => {
    for (const text of [
      'use POST /api/projects instead',
      'GET /api/projects/p1/skills/x',
      'see /doc',
      'application/json, not text/plain',
      'fetching https://example.com/a/b.csv failed',
      'rows 1/2 and 3/4',
      'a lone / slash',
    ])
      expect(stripServerPaths(text)).toBe(text);
  });

  // Quadratic backtracking over 400,000 characters would run for hours: jest's timeout is the bound.
  it('is linear on long inputs', () => {
    const long = `${'/a'.repeat(100_000)} ${'x/'.repeat(100_000)}`;
    expect(stripServerPaths(long)).toContain('x/x/');
  });
});
