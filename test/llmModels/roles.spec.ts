/**
 * Who may do what with LLM models, as with trained models: an analyst queries them (their calls are
 * recorded under the analyst's name, so LLM_USAGE says who spent what) but cannot define one; an
 * auditor reads information_schema.EVENTS only.
 */
import { ADMIN, login, sqlOver, startAuthApp, userWithRole } from '../auth/support';
import type { TestApp } from '../support/app';
import { closeStandIns, givenQuestionModel, standIn } from './world';

describe('LLM models and roles', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(async () => {
    await t.dispose();
    await closeStandIns();
  });

  it('an analyst asks an LLM model and is counted; defining one takes editor; an auditor cannot ask', async () => {
    const fake = await standIn();
    await givenQuestionModel((query) => sqlOver(t, admin, query), {
      baseUrl: fake.baseUrl,
      engine: 'role_engine',
      model: 'role_model',
      key: 'sk-r',
    });
    const analyst = await userWithRole(t, admin, 'ann', 'analyst');
    expect(
      await sqlOver(t, analyst.cookie, `SELECT answer FROM mindsdb.role_model WHERE q = 'hi'`),
    ).toMatchObject({
      type: 'table',
      data: [['answer: Q: hi']],
    });
    expect(await sqlOver(t, analyst.cookie, `SELECT LLM('hi')`)).toMatchObject({ type: 'error' });
    const refused = await sqlOver(
      t,
      analyst.cookie,
      `CREATE MODEL mindsdb.other PREDICT answer USING engine = 'role_engine', prompt_template = '{{q}}'`,
    );
    expect(refused).toMatchObject({ type: 'error', error_code: 1227 });
    const usage = await sqlOver(
      t,
      admin,
      `SELECT USER_NAME, ROLE, CALLS FROM information_schema.LLM_USAGE WHERE MODEL = 'role_model'`,
    );
    expect(usage).toMatchObject({ data: [['ann', 'analyst', 1]] });
    const auditor = await userWithRole(t, admin, 'aud', 'auditor');
    expect(
      await sqlOver(t, auditor.cookie, `SELECT answer FROM mindsdb.role_model WHERE q = 'x'`),
    ).toMatchObject({
      type: 'error',
    });
    expect(fake.chatRequests()).toHaveLength(1);
  });
});
