/**
 * Documents into a knowledge base as a new user would put them there: a PDF and a DOCX uploaded
 * (multipart PUT /api/files/{name}), inserted with `INSERT INTO kb SELECT … FROM files.<name>`,
 * then found by a semantic search for a sentence of each (the built-in embeddings: no provider).
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, uniqueName } from '../support/world';
import { docxOf, pdfOf } from '../files/documents-fixtures';

const ok = async (t: TestApp, query: string) => {
  const answer = await querySql(t, query);
  if (answer.type === 'error') throw new Error(`${query}: ${answer.error_message}`);
  return answer;
};

const PDF_SENTENCE = 'Otters hold hands while they sleep so they do not drift apart';
const DOCX_SENTENCE = 'Badgers dig their setts under old hedgerows and line them with bedding';

describe.each(storeKinds)('documents into a knowledge base (%s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  it('given a PDF and a DOCX uploaded, when their content is inserted into a knowledge base, then a search finds a sentence of each', async () => {
    const project = uniqueName('p');
    const kb = uniqueName('kb');
    const pdf = uniqueName('report');
    const docx = uniqueName('notes');
    await ok(t, `CREATE PROJECT ${project}`);
    await ok(t, `CREATE KNOWLEDGE_BASE ${project}.${kb}`);
    await t.http
      .put(`/api/files/${pdf}`)
      .attach('file', pdfOf(['Rivers and their animals', PDF_SENTENCE]), 'report.pdf')
      .expect(200);
    await t.http
      .put(`/api/files/${docx}`)
      .attach(
        'file',
        docxOf(['# Hedgerows', DOCX_SENTENCE, '# Fields', 'Hares run across open fields']),
        'notes.docx',
      )
      .expect(200);

    const fromPdf = await ok(t, `INSERT INTO ${project}.${kb} SELECT content FROM files.${pdf}`);
    const fromDocx = await ok(t, `INSERT INTO ${project}.${kb} SELECT content FROM files.${docx}`);

    expect(fromPdf).toMatchObject({ type: 'ok', affected_rows: 2 });
    expect(fromDocx).toMatchObject({ type: 'ok', affected_rows: 2 });
    const search = async (question: string) =>
      (await ok(t, `SELECT chunk_content FROM ${project}.${kb} WHERE content = '${question}' LIMIT 1`)).data;
    expect(await search('do otters hold hands when they sleep')).toEqual([[PDF_SENTENCE]]);
    expect(await search('where do badgers dig their setts')).toEqual([
      [expect.stringContaining(DOCX_SENTENCE)],
    ]);
    const { id } = (await t.http.get(`/api/projects/${project}/knowledge_bases/${kb}`).expect(200)).body;
    const inserted = await eventsOf(t, `kb-${id}`);
    expect(inserted).toEqual([
      expect.objectContaining({
        type: 'KnowledgeBaseDocumentsInserted',
        data: expect.objectContaining({ documents: 2, kbId: id }),
      }),
      expect.objectContaining({
        type: 'KnowledgeBaseDocumentsInserted',
        data: expect.objectContaining({ documents: 2, kbId: id }),
      }),
    ]);
  });

  it('given a DOCX uploaded, when all its columns or its TO_MARKDOWN() are inserted, then sections keep their place as metadata, and the whole text is one document', async () => {
    const project = uniqueName('p');
    const kb = uniqueName('kb');
    const docx = uniqueName('guide');
    await ok(t, `CREATE PROJECT ${project}`);
    await ok(t, `CREATE KNOWLEDGE_BASE ${project}.${kb}`);
    await t.http
      .put(`/api/files/${docx}`)
      .attach(
        'file',
        docxOf(['# Hedgerows', DOCX_SENTENCE, '# Fields', 'Hares run across open fields']),
        'guide.docx',
      )
      .expect(200);

    const all = await ok(t, `INSERT INTO ${project}.${kb} SELECT * FROM files.${docx}`);
    const whole = await ok(t, `INSERT INTO ${project}.${kb} (content) SELECT TO_MARKDOWN(files.${docx})`);

    expect(all).toMatchObject({ type: 'ok', affected_rows: 2 });
    expect(whole).toMatchObject({ type: 'ok', affected_rows: 1 });
    const rows = await ok(t, `SELECT chunk_content, section, title FROM ${project}.${kb} WHERE section = 2`);
    expect(rows.data).toEqual([['# Fields\n\nHares run across open fields', 2, 'Fields']]);
    const found = await ok(
      t,
      `SELECT chunk_content FROM ${project}.${kb} WHERE content = 'hares run across fields' AND section IS NULL LIMIT 1`,
    );
    expect(found.data).toEqual([[expect.stringContaining('Hares run across open fields')]]);
  });
});
