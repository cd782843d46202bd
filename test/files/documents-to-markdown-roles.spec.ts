/**
 * `TO_MARKDOWN()` under the caller's role: it reads a file (and fetches URLs), so a file is held to
 * the caller's table policy like a `SELECT … FROM files.<name>`, and the auditor, who reads the log
 * only, may not call it at all.
 */
import { ADMIN, login, projectToken, sqlOver, startAuthApp, userWithRole } from '../auth/support';
import type { TestApp } from '../support/app';
import { uniqueName } from '../support/world';
import { pdfOf } from './documents-fixtures';

describe('TO_MARKDOWN() and roles', () => {
  let t: TestApp;
  let admin: string;
  const file = uniqueName('brief');
  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    admin = await login(t, ADMIN.name, ADMIN.password);
    await t.http
      .put(`/api/files/${file}`)
      .set('Cookie', admin)
      .attach('file', pdfOf(['Storks migrate south']), 'brief.pdf')
      .expect(200);
  });
  afterAll(() => t?.dispose());

  it('given an analyst, when they convert an uploaded document, then they read its markdown', async () => {
    const analyst = await userWithRole(t, admin, uniqueName('analyst'), 'analyst');
    expect(await sqlOver(t, analyst.cookie, `SELECT TO_MARKDOWN(files.${file}) AS md`)).toMatchObject({
      type: 'table',
      data: [['Storks migrate south']],
    });
  });

  it('given a token scoped to a project, when it converts a file, then the table policy refuses it as it refuses reading the file', async () => {
    const project = uniqueName('scoped');
    await t.http.post('/api/projects').set('Cookie', admin).send({ name: project }).expect(201);
    const token = await projectToken(t, admin, project);
    const asToken = async (query: string) =>
      (
        await t.http
          .post('/api/sql/query')
          .set('Authorization', `Bearer ${token}`)
          .send({ query })
          .expect(200)
      ).body;

    const converted = await asToken(`SELECT TO_MARKDOWN(files.${file}) AS md`);
    const read = await asToken(`SELECT content FROM files.${file}`);

    expect(converted).toMatchObject({
      type: 'error',
      error_code: 1227,
      error_message: expect.stringMatching(/reaches only project/),
    });
    expect(read).toMatchObject({ type: 'error', error_code: 1227 });
  });

  it('given the auditor, when they call TO_MARKDOWN, then it is refused before anything is read or fetched', async () => {
    const auditor = await userWithRole(t, admin, uniqueName('auditor'), 'auditor');
    expect(await sqlOver(t, auditor.cookie, `SELECT TO_MARKDOWN(files.${file}) AS md`)).toMatchObject({
      type: 'error',
      error_code: 1227,
      error_message: 'The auditor role reads information_schema.EVENTS only: to_markdown() is not allowed',
    });
  });
});
