import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';

/**
 * Issue 9, second reproduction: a query text answered once over an empty table must answer the new
 * rows after a write (DuckDB plans bake in the statistics of the data they first saw).
 */
describe.each(storeKinds)('repeated SQL texts follow the data (%s)', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(kind);
  });
  afterEach(async () => t.dispose());

  const createSkill = async (name: string) =>
    t.http
      .post('/api/projects/mindsdb/skills')
      .send({ skill: { name, type: 'sql', params: { database: 'files', tables: [] } } })
      .expect(201);

  it('given an empty skills table was queried, when a skill is created, then the same texts answer it', async () => {
    const texts = [
      'SELECT * FROM mindsdb.skills',
      'SELECT name, type FROM mindsdb.skills',
      "SELECT name FROM mindsdb.skills WHERE name LIKE 's%'",
    ];
    for (const text of texts) expect((await querySql(t, text)).data).toEqual([]);

    await createSkill('s_one');

    const all = await querySql(t, texts[0]!);
    const name = all.column_names!.findIndex((c) => c.toLowerCase() === 'name');
    const project = all.column_names!.findIndex((c) => c.toLowerCase() === 'project');
    const type = all.column_names!.findIndex((c) => c.toLowerCase() === 'type');
    expect(all.data).toHaveLength(1);
    expect([all.data![0]![name], all.data![0]![project], all.data![0]![type]]).toEqual([
      's_one',
      'mindsdb',
      'sql',
    ]);
    expect((await querySql(t, texts[1]!)).data).toEqual([['s_one', 'sql']]);
    expect((await querySql(t, texts[2]!)).data).toEqual([['s_one']]);
  });

  it('given SHOW FULL DATABASES ran once, when a project is created, then it lists the new name', async () => {
    const before = await querySql(t, 'SHOW FULL DATABASES');
    expect(before.type).toBe('table');
    expect((await querySql(t, 'CREATE DATABASE quarterly_data')).type).toBe('ok');
    const after = await querySql(t, 'SHOW FULL DATABASES');
    expect(after.data).toEqual([...before.data!, ['quarterly_data', 'project', null]]);
  });

  it('given a parameterised query was prepared, when longer values arrive, then each value answers its rows', async () => {
    const text = 'SELECT name FROM mindsdb.skills WHERE name = :n';
    expect((await querySql(t, text, { params: { n: 'a' } })).data).toEqual([]);
    await createSkill('a_much_longer_skill_name_than_before');
    await createSkill('b');
    expect((await querySql(t, text, { params: { n: 'a_much_longer_skill_name_than_before' } })).data).toEqual(
      [['a_much_longer_skill_name_than_before']],
    );
    expect((await querySql(t, text, { params: { n: 'b' } })).data).toEqual([['b']]);
  });
});
