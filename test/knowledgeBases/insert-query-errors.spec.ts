/**
 * A knowledge base filled from a query: the query's SQL errors are the request's problem (400, 404,
 * 403), never a 500, and nothing is inserted.
 */
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject } from '../support/world';

describe.each(storeKinds)('a knowledge base filled from a query that fails (%s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  it.each([
    ['does not parse', 'SELEC id, content FROM nowhere', 400, /syntax|Parser/i],
    [
      'names a table that does not exist',
      'SELECT 1 AS id, 2 AS content FROM files.no_such_file',
      404,
      /no_such_file/,
    ],
    ['names a column that does not exist', 'SELECT nope AS id FROM (SELECT 1 AS x) AS t', 400, /nope/],
    ['reads a file by path', "SELECT * FROM read_csv('/etc/passwd')", 403, /read_csv|not allowed|Forbidden/i],
  ])(
    'given a query that %s, then its status, a problem naming it, and no documents',
    async (_what, query, status, detail) => {
      const { name: project } = await givenProject(t);
      await t.http
        .post(`/api/projects/${project}/knowledge_bases`)
        .send({ knowledge_base: { name: 'kb' } })
        .expect(201);
      const answer = await t.http
        .put(`/api/projects/${project}/knowledge_bases/kb`)
        .send({ knowledge_base: { query } });
      expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
        status,
        type: expect.stringContaining('application/problem+json'),
      });
      expect(problemOf(answer).detail).toMatch(detail);
      const kb = (await t.http.get(`/api/projects/${project}/knowledge_bases/kb`).expect(200)).body as {
        documents: number;
      };
      expect(kb.documents).toBe(0);
    },
  );
});
