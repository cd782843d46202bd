/**
 * DROP … IF EXISTS is one behaviour for every kind (`dropByName`, src/sql/handlers.ts): a resource
 * that is not there, or a project that is not there, is no error and writes nothing, as PostgreSQL's
 * and MySQL's DROP TABLE IF EXISTS of a table in a schema that does not exist. Without IF EXISTS, the
 * missing project is named. (Before, JOB, TRIGGER, KNOWLEDGE_BASE and VIEW refused a missing project
 * under IF EXISTS while SKILL, AGENT, CHATBOT and MODEL did not.)
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';

const KINDS = ['SKILL', 'AGENT', 'CHATBOT', 'JOB', 'TRIGGER', 'KNOWLEDGE_BASE', 'VIEW', 'MODEL'];

describe.each(storeKinds)('DROP … IF EXISTS, every kind (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.dispose());

  const head = async () => (await t.running.ctx.log.head()).position;

  it.each(KINDS)(
    'given no project no_such_project, when DROP %s IF EXISTS in it, then ok and nothing is written; without IF EXISTS, an error naming the project',
    async (what) => {
      const before = await head();
      expect(await querySql(t, `DROP ${what} IF EXISTS no_such_project.gone`)).toMatchObject({ type: 'ok' });
      expect(await head()).toBe(before);
      expect(await querySql(t, `DROP ${what} no_such_project.gone`)).toMatchObject({
        type: 'error',
        error_message: expect.stringContaining('no_such_project'),
      });
      expect(await head()).toBe(before);
    },
  );

  it.each(KINDS)(
    'given the project but no such resource, when DROP %s IF EXISTS, then ok and nothing is written',
    async (what) => {
      const before = await head();
      expect(await querySql(t, `DROP ${what} IF EXISTS mindsdb.gone`)).toMatchObject({ type: 'ok' });
      expect(await head()).toBe(before);
    },
  );
});
