/**
 * Hostile documents: each upload is refused with a 400 problem naming the limit it passed or the
 * defect it has, the process keeps serving, and nothing is recorded (no event on the file's
 * stream, no bytes left behind). Every file is made here (documents-fixtures.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { hostileStrings } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { eventsOf, uniqueName } from '../support/world';
import { deflated, docxAround, docxBomb, pdfOf } from './documents-fixtures';

const SEED = propertySeed();

type Hostile = { file: Buffer; fileName: string; title: string; detail: RegExp };

const HOSTILE: Record<string, () => Hostile> = {
  'a DOCX zip bomb declaring its 2 GiB': () => ({
    file: docxBomb(2, 'honest'),
    fileName: 'bomb.docx',
    title: 'Document too large',
    detail: /inflates to more than 268435456 bytes \(DOCUMENT_MAX_UNZIPPED_BYTES\)/,
  }),
  'a DOCX zip bomb declaring 1 KiB and inflating to 2 GiB': () => ({
    file: docxBomb(2, 'lying'),
    fileName: 'liar.docx',
    title: 'Document too large',
    detail: /inflates to more than 268435456 bytes \(DOCUMENT_MAX_UNZIPPED_BYTES\)/,
  }),
  'a DOCX that is not a zip': () => ({
    file: Buffer.from('PK\u0003\u0004 and then nothing of a zip'),
    fileName: 'broken.docx',
    title: 'Unreadable file',
    detail: /not a readable zip archive/,
  }),
  'a DOCX without a document part': () => ({
    file: docxAround(deflated('word/other.xml', '<x/>')),
    fileName: 'hollow.docx',
    title: 'Unreadable file',
    detail: /cannot be read as docx/,
  }),
  'a truncated PDF': () => ({
    file: pdfOf(['Otters']).subarray(0, 120),
    fileName: 'cut.pdf',
    title: 'Unreadable file',
    detail: /cannot be read as pdf/,
  }),
  'a PDF of garbage after its header': () => ({
    file: Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4096, 0xff)]),
    fileName: 'garbage.pdf',
    title: 'Unreadable file',
    detail: /cannot be read as pdf/,
  }),
  'a PDF of 10,000 pages': () => ({
    file: pdfOf(Array.from({ length: 10_000 }, (_, i) => `page ${i}`)),
    fileName: 'tome.pdf',
    title: 'Document too large',
    detail: /has 10000 pages; at most 2000 are accepted \(DOCUMENT_MAX_PAGES\)/,
  }),
  'an HTML nested 100,000 deep': () => ({
    file: Buffer.from(`<html><body>${'<div>'.repeat(100_000)}deep</body></html>`),
    fileName: 'deep.html',
    title: 'Document too large',
    detail: /nested more than 512 deep \(DOCUMENT_MAX_DEPTH\)/,
  }),
  'an empty PDF': () => ({
    file: Buffer.alloc(0),
    fileName: 'empty.pdf',
    title: 'Empty file',
    detail: /empty/,
  }),
  'a text file holding NUL bytes': () => ({
    file: Buffer.from('line one\u0000line two'),
    fileName: 'nul.txt',
    title: 'Unreadable file',
    detail: /NUL characters/,
  }),
  'a Markdown file that is not UTF-8': () => ({
    file: Buffer.from([0x23, 0x20, 0xc3, 0x28, 0xa0, 0xa1]),
    fileName: 'latin.md',
    title: 'Unreadable file',
    detail: /not UTF-8/,
  }),
  'a Markdown file of blank lines only': () => ({
    file: Buffer.from('\n\n   \n'),
    fileName: 'blank.md',
    title: 'No text',
    detail: /holds no text/,
  }),
};

describe.each(storeKinds)('hostile documents (%s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  const incoming = () => fs.readdirSync(path.join(t.config.dataDir, 'files', 'incoming'));

  /** Still serving: a document uploads and reads back after the refusal. */
  const stillServing = async () => {
    const name = uniqueName('after');
    await t.http
      .put(`/api/files/${name}`)
      .attach('file', Buffer.from('# Fine\nStill here.'), 'fine.md')
      .expect(200);
    const answer = await t.http
      .post('/api/sql/query')
      .send({ query: `SELECT content FROM files.${name}` })
      .expect(200);
    expect(answer.body.data).toEqual([['# Fine\nStill here.']]);
  };

  it.each(Object.keys(HOSTILE))(
    'given %s, when it is uploaded, then a 400 names why and nothing is recorded',
    async (what) => {
      const hostile = HOSTILE[what]!();
      const name = uniqueName('hostile');

      const res = await t.http
        .put(`/api/files/${name}`)
        .attach('file', hostile.file, hostile.fileName)
        .expect(400);

      expect(problemOf(res)).toMatchObject({
        status: 400,
        title: hostile.title,
        detail: expect.stringMatching(hostile.detail),
      });
      expect(await eventsOf(t, `file-${name}`)).toEqual([]);
      expect(incoming()).toEqual([]);
      await stillServing();
    },
  );

  it('given file names with a lone surrogate or a NUL, when a document is uploaded under them, then a 400 names the name', async () => {
    const pdf = pdfOf(['Otters']);
    for (const segment of ['%ED%A0%80', 'doc%ED%B0%80x', 'doc%00x']) {
      const res = await t.http.put(`/api/files/${segment}`).attach('file', pdf, 'otters.pdf').expect(400);
      expect(problemOf(res).title).toMatch(/Malformed path|Invalid file name/);
    }
    expect(incoming()).toEqual([]);
    await stillServing();
  });

  describe('generated documents', () => {
    it('given generated hostile text as Markdown, text and HTML uploads, then each is a table or a 400, never a 500, and the tables rebuild the same', async () => {
      const kinds = ['md', 'txt', 'html'] as const;
      const accepted: string[] = [];
      await fc.assert(
        fc.asyncProperty(
          hostileStrings(['# ', '<div>', '</div>', '```', '\n\n', '<h1>x</h1>'], 30_000),
          fc.constantFrom(...kinds),
          async (text, kind) => {
            const name = uniqueName('gen');
            const res = await t.http
              .put(`/api/files/${name}`)
              .attach('file', Buffer.from(text, 'utf8'), `gen.${kind}`);
            expect([200, 400]).toContain(res.status);
            // The audit read on PostgreSQL shows events behind the oldest transaction still open in
            // the cluster (src/eventlog/postgres.ts `committedHorizon`): an accepted upload's event is
            // read again until it shows, for five seconds at most (every 20 ms: the read is cheap,
            // and beside other PostgreSQL specs many accepted uploads wait here).
            let events = await eventsOf(t, `file-${name}`);
            for (let tries = 0; res.status === 200 && events.length === 0 && tries < 250; tries++) {
              await new Promise((r) => setTimeout(r, 20));
              events = await eventsOf(t, `file-${name}`);
            }
            if (res.status === 400) {
              expect(problemOf(res).detail).toBeTruthy();
              expect(events).toEqual([]);
            } else {
              expect(events.map((e) => e.type)).toEqual(['FileUploaded']);
              accepted.push(name);
            }
          },
        ),
        { seed: SEED, numRuns: propertyRuns(40) },
      );
      // What was accepted loads the same again from the log.
      const read = () =>
        Promise.all(
          accepted.map(
            async (n) =>
              (
                await t.http
                  .post('/api/sql/query')
                  .send({ query: `SELECT * FROM files.${n} ORDER BY section` })
                  .expect(200)
              ).body.data,
          ),
        );
      const live = await read();
      await t.running.ctx.projections.rebuild();
      expect(await read()).toEqual(live);
    }, 180_000);
  });
});

describe('documents past the time, memory and size limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { DOCUMENT_TIMEOUT_MS: '10', DOCUMENT_MAX_BYTES: String(64 * 1024) });
  });
  afterAll(() => t?.dispose());

  it('given a conversion still running at DOCUMENT_TIMEOUT_MS, then it is stopped and refused naming the limit', async () => {
    const name = uniqueName('slow');
    const res = await t.http
      .put(`/api/files/${name}`)
      .attach(
        'file',
        pdfOf(Array.from({ length: 1500 }, (_, i) => `page ${i}`)).subarray(0, 60 * 1024),
        'slow.pdf',
      )
      .expect(400);
    expect(problemOf(res).detail).toMatch(/took longer than 10 ms \(DOCUMENT_TIMEOUT_MS\); it was stopped/);
    expect(await eventsOf(t, `file-${name}`)).toEqual([]);
  });

  it('given a document larger than DOCUMENT_MAX_BYTES, then it is refused before it is read', async () => {
    const name = uniqueName('big');
    const res = await t.http
      .put(`/api/files/${name}`)
      .attach('file', Buffer.from('word '.repeat(20_000)), 'big.txt')
      .expect(400);
    expect(problemOf(res)).toMatchObject({
      title: 'Document too large',
      detail: 'The document has 100000 bytes; at most 65536 are converted (DOCUMENT_MAX_BYTES)',
    });
    expect(await eventsOf(t, `file-${name}`)).toEqual([]);
  });
});

describe('a conversion past DOCUMENT_MAX_MEMORY_MB', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { DOCUMENT_MAX_MEMORY_MB: '32' });
  });
  afterAll(() => t?.dispose());

  it('given an HTML of a million elements, when its worker outgrows its heap, then it is stopped, refused naming the limit, and the service serves on', async () => {
    const name = uniqueName('huge');

    const res = await t.http
      .put(`/api/files/${name}`)
      .attach('file', Buffer.from('<p>x</p>'.repeat(1_000_000)), 'huge.html')
      .expect(400);

    expect(problemOf(res)).toMatchObject({
      title: 'Document too large',
      detail: 'Converting the HTML needs more than 32 MiB (DOCUMENT_MAX_MEMORY_MB); it was stopped',
    });
    expect(await eventsOf(t, `file-${name}`)).toEqual([]);
    await t.http
      .put(`/api/files/${name}`)
      .attach('file', Buffer.from('<p>small</p>'), 'small.html')
      .expect(200);
  });
});
