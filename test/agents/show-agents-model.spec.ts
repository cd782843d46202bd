import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { givenProject } from '../support/world';

/**
 * SHOW AGENTS and information_schema.AGENTS name the agent's model whichever shape made it: the
 * skills shape (`model_name`, or `USING model = 'gpt-4o'`) or MindsDB v26's `model = {…}` object.
 */
describe.each(storeKinds)('SHOW AGENTS names the model of every agent shape (event store: %s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  }, 60_000);
  afterAll(async () => {
    await t?.dispose();
  });

  const modelNames = (a: SqlAnswer) => {
    expect(a.type).toBe('table');
    const name = a.column_names!.indexOf('NAME');
    const model = a.column_names!.indexOf('MODEL_NAME');
    return Object.fromEntries(a.data!.map((r) => [r[name], r[model]]));
  };

  it('shows MODEL_NAME for agents made with model={…} over SQL and REST, and with model_name', async () => {
    const { name: project } = await givenProject(t);
    expect(
      (
        await querySql(
          t,
          `CREATE AGENT ${project}.v26_sql USING model = {"provider": "openai", "model_name": "gpt-4o-mini", "api_key": "sk-v26"}`,
        )
      ).type,
    ).toBe('ok');
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: { name: 'v26_rest', model: { model_name: 'gpt-4.1', provider: 'openai', api_key: 'sk-rest' } },
      })
      .expect(201);
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({ agent: { name: 'flat', model_name: 'gpt-4o', provider: 'openai', params: {} } })
      .expect(201);
    expect((await querySql(t, `CREATE AGENT ${project}.plain USING model = 'gpt-3.5-turbo'`)).type).toBe(
      'ok',
    );

    const expected = {
      v26_sql: 'gpt-4o-mini',
      v26_rest: 'gpt-4.1',
      flat: 'gpt-4o',
      plain: 'gpt-3.5-turbo',
    };
    expect(modelNames(await querySql(t, `SHOW AGENTS FROM ${project}`))).toEqual(expected);
    expect(
      modelNames(
        await querySql(
          t,
          `SELECT NAME, MODEL_NAME FROM information_schema.AGENTS WHERE PROJECT = '${project}'`,
        ),
      ),
    ).toEqual(expected);
    expect(modelNames(await querySql(t, `SELECT * FROM ${project}.agents`))).toEqual(expected);
    // The key stays masked: only the model's name is lifted out of params.
    const all = JSON.stringify(await querySql(t, `SELECT * FROM ${project}.agents`));
    expect(all).not.toContain('sk-v26');
    expect(all).not.toContain('sk-rest');
  });
});
