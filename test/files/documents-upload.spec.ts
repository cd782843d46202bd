/**
 * Documents uploaded as MindsDB takes them (PUT /api/files/{name}, multipart field "file"): a PDF,
 * a DOCX, an HTML, a Markdown and a text file each become `files.<name>`, a row per section
 * (section, title, content, metadata), recorded in one FileUploaded event and loaded the same way
 * again when the read model is rebuilt from the log.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, uniqueName } from '../support/world';
import { docxOf, pdfOf } from './documents-fixtures';

type Upload = { file: Buffer; fileName: string; format: string; expected: [number, string | null, string][] };

const UPLOADS: Record<string, Upload> = {
  pdf: {
    file: pdfOf(['Otters hold hands while they sleep', 'Beavers build dams of branches']),
    fileName: 'animals.pdf',
    format: 'pdf',
    expected: [
      [1, null, 'Otters hold hands while they sleep'],
      [2, null, 'Beavers build dams of branches'],
    ],
  },
  docx: {
    file: docxOf(['# Badgers', 'Badgers dig setts under hedges.', '# Moles', 'Moles rarely surface.']),
    fileName: 'burrows.docx',
    format: 'docx',
    expected: [
      [1, 'Badgers', '# Badgers\n\nBadgers dig setts under hedges.'],
      [2, 'Moles', '# Moles\n\nMoles rarely surface.'],
    ],
  },
  html: {
    file: Buffer.from(
      '<!doctype html><html><body><p>Lead</p><h1>Herons</h1><p>Herons <b>wait</b> still.</p><h2>Egrets</h2><ul><li>white</li></ul></body></html>',
    ),
    fileName: 'birds.html',
    format: 'html',
    expected: [
      [1, null, 'Lead'],
      [2, 'Herons', '# Herons\n\nHerons **wait** still.'],
      [3, 'Egrets', '## Egrets\n\n* white'],
    ],
  },
  md: {
    file: Buffer.from(
      '# Newts\nNewts breathe through skin.\n```\n# not a heading\n```\n## Toads\nToads are dry.\n',
    ),
    fileName: 'ponds.md',
    format: 'md',
    expected: [
      [1, 'Newts', '# Newts\nNewts breathe through skin.\n```\n# not a heading\n```'],
      [2, 'Toads', '## Toads\nToads are dry.'],
    ],
  },
  txt: {
    file: Buffer.from('Swifts sleep on the wing.\n\nThey land only to nest.\n'),
    fileName: 'swifts.txt',
    format: 'txt',
    expected: [[1, null, 'Swifts sleep on the wing.\n\nThey land only to nest.']],
  },
};

describe.each(storeKinds)('documents uploaded to files (%s)', (store) => {
  let t: TestApp;
  const sql = async (query: string) => (await t.http.post('/api/sql/query').send({ query }).expect(200)).body;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  it.each(Object.keys(UPLOADS))(
    'given a %s, when it is uploaded as a new user would, then its sections are the rows of files.<name>, recorded once',
    async (kind) => {
      const upload = UPLOADS[kind]!;
      const name = uniqueName(`doc_${kind}`);

      const res = await t.http
        .put(`/api/files/${name}`)
        .attach('file', upload.file, upload.fileName)
        .expect(200);

      expect(res.body).toMatchObject({
        name,
        format: upload.format,
        row_count: upload.expected.length,
        columns: ['section', 'title', 'content', 'metadata'],
        column_types: { section: 'BIGINT', title: 'VARCHAR', content: 'VARCHAR', metadata: 'JSON' },
        size: upload.file.length,
        original_name: upload.fileName,
      });
      const rows = await sql(`SELECT section, title, content FROM files.${name} ORDER BY section`);
      expect(rows.data).toEqual(upload.expected);
      const metadata = await sql(`SELECT metadata FROM files.${name} ORDER BY section LIMIT 1`);
      expect(JSON.parse(metadata.data[0][0])).toEqual({
        file_name: upload.fileName,
        format: upload.format,
        [upload.format === 'pdf' ? 'page' : 'section']: 1,
      });
      const events = await eventsOf(t, `file-${name}`);
      expect(events).toEqual([
        expect.objectContaining({
          type: 'FileUploaded',
          data: expect.objectContaining({
            name,
            format: upload.format,
            rowCount: upload.expected.length,
            csv: null,
          }),
        }),
      ]);
      const listed = (await t.http.get('/api/files').expect(200)).body as { name: string }[];
      expect(listed.find((f) => f.name === name)).toEqual(res.body);
    },
  );

  it('given a Markdown section larger than a JSON object DuckDB reads by default (16 MB), then it loads whole, and again on rebuild', async () => {
    const name = uniqueName('long');
    const text = `# Long\n${'a long line of words '.repeat(900_000)}`;

    await t.http.put(`/api/files/${name}`).attach('file', Buffer.from(text), 'long.md').expect(200);
    const read = () => sql(`SELECT section, title, length(content) FROM files.${name}`);

    expect((await read()).data).toEqual([[1, 'Long', text.trimEnd().length]]);
    await t.running.ctx.projections.rebuild();
    expect((await read()).data).toEqual([[1, 'Long', text.trimEnd().length]]);
  });

  it('given uploaded documents, when the read model is rebuilt from the log, then their tables are the same rows', async () => {
    const names = await Promise.all(
      Object.entries(UPLOADS).map(async ([kind, upload]) => {
        const name = uniqueName(`again_${kind}`);
        await t.http.put(`/api/files/${name}`).attach('file', upload.file, upload.fileName).expect(200);
        return name;
      }),
    );
    const read = () =>
      Promise.all(
        names.map((n) => sql(`SELECT section, title, content, metadata FROM files.${n} ORDER BY section`)),
      );
    const before = await read();

    await t.running.ctx.projections.rebuild();

    expect(await read()).toEqual(before);
  });
});

describe('a document uploaded from a URL', () => {
  let t: TestApp;
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/files/field-guide.pdf') res.end(UPLOADS.pdf!.file);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startTestApp('sqlite', { FILE_URL_UPLOAD: 'true' });
  });
  afterAll(async () => {
    await t?.dispose();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('given FILE_URL_UPLOAD, when a PDF URL is uploaded, then it is converted as a multipart upload is', async () => {
    const name = uniqueName('remote_pdf');

    const res = await t.http
      .put(`/api/files/${name}`)
      .send({ source_type: 'url', source: `${base}/files/field-guide.pdf` })
      .expect(200);

    expect(res.body).toMatchObject({ name, format: 'pdf', row_count: 2, original_name: 'field-guide.pdf' });
    const rows = (
      await t.http
        .post('/api/sql/query')
        .send({ query: `SELECT section, content FROM files.${name} ORDER BY section` })
        .expect(200)
    ).body;
    expect(rows.data).toEqual(UPLOADS.pdf!.expected.map(([section, , content]) => [section, content]));
    expect((await eventsOf(t, `file-${name}`)).map((e) => e.type)).toEqual(['FileUploaded']);
  });
});
