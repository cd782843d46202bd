/**
 * Names Object's own members have (`constructor`, `__proto__`, `toString`) are names like any other
 * where a client's word is looked up in a table (src/shared/ownEntry.ts). Before, `constructor`
 * found Object's constructor there: a skill of that type and a job `every 2 constructor` failed
 * inside the server (500), and a file named `x.constructor` was refused as unreadable "as function
 * Object() { [native code] }". hostile-strings.property found the skill on a fresh seed.
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenProject } from '../support/world';

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty'] as const;

describe.each(storeKinds)('names Object has, from a client (event store: %s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it.each(NAMES)('a skill of type %s is stored as free text, as any unknown type', async (type) => {
    const { name: project } = await givenProject(t);
    const created = await t.http
      .post(`/api/projects/${project}/skills`)
      .send({ skill: { name: 's', type, params: { any: 1 } } })
      .expect(201);
    expect(created.body).toMatchObject({ name: 's', type, params: { any: 1 } });
    const stored = (await eventsOf(t, `project-${project}`)).filter((e) => e.type === 'SkillCreated');
    expect(stored.map((e) => e.data.type)).toEqual([type]);
  });

  it.each(NAMES)(
    'a job every 2 %s is refused naming the period (REST and SQL), nothing recorded',
    async (unit) => {
      const { name: project } = await givenProject(t);
      const rest = await t.http
        .post(`/api/projects/${project}/jobs`)
        .send({ job: { name: 'j', query: 'SELECT 1', schedule_str: `every 2 ${unit}` } });
      // `__proto__` is not a word the schedule's grammar reads (underscores): refused by its shape.
      expect(rest.status).toBe(400);
      expect(rest.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(rest.body.detail).toMatch(
        unit === '__proto__' ? /Can't parse schedule/ : new RegExp(`\\b${unit}\\b`),
      );
      const sql = await querySql(t, `CREATE JOB ${project}.j (SELECT 1) EVERY 2 ${unit}`);
      expect(sql).toMatchObject({ type: 'error' });
      expect(sql.error_code).not.toBe(1105);
      const jobs = (await eventsOf(t, `project-${project}`)).filter((e) => e.type === 'JobCreated');
      expect(jobs).toEqual([]);
    },
  );

  it.each(NAMES)(
    'a file named x.%s is read by its content (a CSV), not taken for a document',
    async (ext) => {
      const put = await t.http
        .put(`/api/files/named_${ext.replace(/_/g, '')}`)
        .attach('file', Buffer.from('a,b\n1,2\n'), `x.${ext}`)
        .expect(200);
      expect(put.body).toMatchObject({ format: 'csv', row_count: 1, columns: ['a', 'b'] });
    },
  );
});
