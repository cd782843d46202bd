/**
 * A project-scoped token reaches its project only, over every door. What a request reads to fill a
 * knowledge base or train a model (a query in its body) is read as that caller's SELECT would be:
 * another project's tables, files and external databases stay out of reach.
 */
import { problemOf, storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, projectToken, sqlOver, startAuthApp } from './support';

describe.each(storeKinds)('queries inside requests of a project-scoped token (%s)', (store) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(() => t?.dispose());

  /** Two projects; the other holds a skill whose description is private. */
  const givenProjects = async () => {
    const own = `own_${Math.random().toString(36).slice(2, 8)}`;
    const other = `other_${Math.random().toString(36).slice(2, 8)}`;
    await sqlOver(t, admin, `CREATE PROJECT ${own}`);
    await sqlOver(t, admin, `CREATE PROJECT ${other}`);
    await t.http
      .post(`/api/projects/${other}/skills`)
      .set('Cookie', admin)
      .send({
        skill: {
          name: 'secret_skill',
          type: 'text2sql',
          params: { database: 'files', description: 'private plans' },
        },
      })
      .expect(201);
    const bearer = `Bearer ${await projectToken(t, admin, own)}`;
    return { own, other, bearer };
  };

  const headOf = async () =>
    (
      (await t.http.get('/api/events?limit=1&order=desc').set('Cookie', admin).expect(200)).body as {
        events: { position: number }[];
      }
    ).events[0]?.position;

  it('given a knowledge base in its project, when its rows come from a query of another project, then 403 and nothing is inserted; from its own project they are', async () => {
    const { own, other, bearer } = await givenProjects();
    await t.http
      .post(`/api/projects/${own}/knowledge_bases`)
      .set('Authorization', bearer)
      .send({ knowledge_base: { name: 'kb' } })
      .expect(201);
    const before = await headOf();
    const refused = await t.http
      .put(`/api/projects/${own}/knowledge_bases/kb`)
      .set('Authorization', bearer)
      .send({ knowledge_base: { query: `SELECT name AS id, params AS content FROM ${other}.skills` } });
    expect(refused.status).toBe(403);
    expect(problemOf(refused).detail).toContain(`This token reaches only project ${own}, not ${other}`);
    expect(await headOf()).toBe(before);
    const kb = (
      await t.http.get(`/api/projects/${own}/knowledge_bases/kb`).set('Authorization', bearer).expect(200)
    ).body as { documents: number };
    expect(kb.documents).toBe(0);

    await t.http
      .post(`/api/projects/${own}/skills`)
      .set('Authorization', bearer)
      .send({
        skill: { name: 'mine', type: 'text2sql', params: { database: 'files', description: 'own notes' } },
      })
      .expect(201);
    const inserted = await t.http
      .put(`/api/projects/${own}/knowledge_bases/kb`)
      .set('Authorization', bearer)
      .send({ knowledge_base: { query: `SELECT name AS id, params AS content FROM ${own}.skills` } })
      .expect(200);
    expect(inserted.body).toMatchObject({ inserted_documents: 1 });
  });

  it('given a model trained from another project’s table, then 403 and no model is defined', async () => {
    const { own, other, bearer } = await givenProjects();
    const before = await headOf();
    const refused = await t.http
      .post(`/api/projects/${own}/models`)
      .set('Authorization', bearer)
      .send({
        query: `CREATE MODEL leak FROM ${other} (SELECT name, type FROM ${other}.skills) PREDICT type`,
      });
    expect(refused.status).toBe(403);
    expect(problemOf(refused).detail).toContain(`This token reaches only project ${own}`);
    const events = (await t.http.get('/api/events?limit=1000&order=desc').set('Cookie', admin).expect(200))
      .body.events as { position: number; type: string; data: { name?: string } }[];
    expect(events.filter((e) => e.position > (before ?? 0) && e.data.name === 'leak')).toEqual([]);
  });
});
