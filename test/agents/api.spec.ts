import { projectAggregate } from '../../src/projects/aggregate';
import { projectStream } from '../../src/shared/projectState';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenAgent, givenProject, givenSkill } from '../support/world';

describe.each(storeKinds)('agents API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  /** A project of the test's own with three skills agents can use: custom, sql and retrieval. */
  const givenProjectWithSkills = async () => {
    const { name: project } = await givenProject(t);
    await givenSkill(t, project, { name: 'test_skill', type: 'custom', params: {} });
    await givenSkill(t, project, { name: 'sql_skill', type: 'sql', params: { database: 'db' } });
    await givenSkill(t, project, { name: 'kb_skill', type: 'retrieval', params: { source: 'kb' } });
    return project;
  };

  const oldStyle = {
    name: 'old_style',
    model_name: 'gpt-4o',
    provider: 'openai',
    params: { k1: 'v1', openai_api_key: 'sk-abc' },
    skills: ['test_skill', { name: 'sql_skill', tables: ['t1'] }],
  };

  const dataShaped = {
    name: 'TEST_post_agent',
    model: { model_name: 'gpt-3.5-turbo', provider: 'openai', api_key: 'sk-secret-999' },
    data: { tables: ['example_db.customers'] },
    prompt_template: 'example_db.customers stores customers data',
  };

  /** `editable`, given params k1 and k2, then the skills kb_skill and test_skill by a PUT. */
  const givenEditableWithSkills = async (project: string) => {
    await givenAgent(t, project, { name: 'editable', params: { k1: 'v1', k2: 'v2' } });
    return t.http
      .put(`/api/projects/${project}/agents/editable`)
      .send({
        agent: { params: { k1: 'v1.1', k2: null, k3: 'v3' }, skills_to_add: ['kb_skill', 'test_skill'] },
      })
      .expect(200);
  };

  describe('creating and reading', () => {
    it('creates an agent in the skills shape (model_name, provider, params, skills) and answers in that shape', async () => {
      const project = await givenProjectWithSkills();
      const res = await t.http.post(`/api/projects/${project}/agents`).send({ agent: oldStyle }).expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'old_style',
        project_id: expect.any(Number),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        model_name: 'gpt-4o',
        provider: 'openai',
        skills: [
          expect.objectContaining({ name: 'test_skill', agent_ids: [res.body.id] }),
          expect.objectContaining({ name: 'sql_skill', agent_ids: [res.body.id] }),
        ],
        skills_extra_parameters: { test_skill: {}, sql_skill: { tables: ['t1'] } },
        params: { k1: 'v1', openai_api_key: '******' },
      });
    });

    it('reads an agent back by name in any case, as it was created', async () => {
      const project = await givenProjectWithSkills();
      const created = await givenAgent(t, project, oldStyle);
      expect((await t.http.get(`/api/projects/${project}/agents/OLD_STYLE`).expect(200)).body).toEqual(
        created,
      );
    });

    it('creates an agent in the data shape (model, data, prompt_template) and answers in that shape, key masked', async () => {
      const project = await givenProjectWithSkills();
      const res = await t.http
        .post(`/api/projects/${project}/agents`)
        .send({ agent: dataShaped })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'TEST_post_agent',
        project_id: expect.any(Number),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        model: { model_name: 'gpt-3.5-turbo', provider: 'openai', api_key: '******' },
        data: { tables: ['example_db.customers'] },
        prompt_template: 'example_db.customers stores customers data',
      });
    });

    it('keeps the key of a data-shaped agent out of the list and the projection', async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, dataShaped);
      const list = await t.http.get(`/api/projects/${project}/agents`).expect(200);
      expect(list.body.map((a: { name: string }) => a.name)).toEqual(['TEST_post_agent']);
      expect(JSON.stringify(list.body)).not.toContain('sk-secret-999');
      const rows = await t.running.ctx.duck.query('SELECT PARAMS FROM agents');
      expect(JSON.stringify(rows)).not.toContain('sk-secret-999');
    });
  });

  describe('refusals (MindsDB titles), none of which records an agent', () => {
    it.each([
      ['no agent', {}, /Must provide "agent" parameter/],
      ['an agent without name', { agent: {} }, /Missing "name" field for agent/],
    ])('answers 400 for %s', async (_case, body, detail) => {
      const project = await givenProjectWithSkills();
      expect(
        problemOf(await t.http.post(`/api/projects/${project}/agents`).send(body).expect(400)).detail,
      ).toMatch(detail);
    });

    it('answers 404 for an unknown project', async () => {
      expect(
        problemOf(
          await t.http
            .post('/api/projects/nope/agents')
            .send({ agent: { name: 'x' } })
            .expect(404),
        ).title,
      ).toBe('Project not found');
    });

    it('answers 409 for a name that exists', async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, oldStyle);
      expect(
        problemOf(
          await t.http
            .post(`/api/projects/${project}/agents`)
            .send({ agent: { name: 'old_style' } })
            .expect(409),
        ).title,
      ).toBe('Agent already exists');
    });

    it('answers 404 naming an unknown skill', async () => {
      const project = await givenProjectWithSkills();
      const ghost = await t.http
        .post(`/api/projects/${project}/agents`)
        .send({ agent: { name: 'x', skills: ['ghost'] } })
        .expect(404);
      expect(problemOf(ghost)).toMatchObject({
        title: 'Resource not found',
        detail: expect.stringContaining('"ghost"'),
      });
      await t.http.get(`/api/projects/${project}/agents/x`).expect(404);
    });

    it('answers 404 naming an unknown mindsdb model', async () => {
      const project = await givenProjectWithSkills();
      const model = await t.http
        .post(`/api/projects/${project}/agents`)
        .send({ agent: { name: 'x', provider: 'mindsdb', model_name: 'no_such_model' } })
        .expect(404);
      expect(problemOf(model).detail).toMatch(/no_such_model/);
      await t.http.get(`/api/projects/${project}/agents/x`).expect(404);
    });

    it('answers 400 for the deprecated params.database', async () => {
      const project = await givenProjectWithSkills();
      const deprecated = await t.http
        .post(`/api/projects/${project}/agents`)
        .send({ agent: { name: 'x', params: { database: 'd' } } })
        .expect(400);
      expect(problemOf(deprecated).detail).toMatch(/no longer supported/);
      await t.http.get(`/api/projects/${project}/agents/x`).expect(404);
    });

    it('answers 404 for an unknown agent', async () => {
      const project = await givenProjectWithSkills();
      expect(problemOf(await t.http.get(`/api/projects/${project}/agents/ghost`).expect(404)).title).toBe(
        'Agent not found',
      );
    });
  });

  describe('PUT', () => {
    it('merges params with null removal and adds skills', async () => {
      const project = await givenProjectWithSkills();
      const updated = await givenEditableWithSkills(project);
      expect(updated.body.params).toEqual({ k1: 'v1.1', k3: 'v3', mode: 'retrieval' });
      expect(updated.body.skills.map((s: { name: string }) => s.name)).toEqual(['kb_skill', 'test_skill']);
    });

    it('removes skills named in skills_to_remove', async () => {
      const project = await givenProjectWithSkills();
      await givenEditableWithSkills(project);
      const removed = await t.http
        .put(`/api/projects/${project}/agents/editable`)
        .send({ agent: { skills_to_remove: ['kb_skill'] } })
        .expect(200);
      expect(removed.body.skills.map((s: { name: string }) => s.name)).toEqual(['test_skill']);
    });

    it('refuses skills together with skills_to_add (400)', async () => {
      const project = await givenProjectWithSkills();
      await givenEditableWithSkills(project);
      const both = await t.http
        .put(`/api/projects/${project}/agents/editable`)
        .send({ agent: { skills: ['test_skill'], skills_to_add: ['kb_skill'] } })
        .expect(400);
      expect(problemOf(both).title).toBe('Wrong arguments');
    });

    it('never creates an agent (400)', async () => {
      const project = await givenProjectWithSkills();
      const absent = await t.http
        .put(`/api/projects/${project}/agents/nobody`)
        .send({ agent: { params: {} } })
        .expect(400);
      expect(problemOf(absent)).toMatchObject({ title: 'Creation is not allowed' });
      await t.http.get(`/api/projects/${project}/agents/nobody`).expect(404);
    });

    it('refuses to rename an agent to a name that exists (409)', async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, oldStyle);
      await givenEditableWithSkills(project);
      expect(
        problemOf(
          await t.http
            .put(`/api/projects/${project}/agents/editable`)
            .send({ agent: { name: 'old_style' } })
            .expect(409),
        ).title,
      ).toBe('Agent already exists');
    });

    describe('of a stored key', () => {
      const storedKey = async (project: string) => {
        const { state } = await t.running.ctx.commands.load(projectStream(project), projectAggregate);
        const params = [...state.agents.values()].find((a) => a.name === 'TEST_post_agent')!.params;
        return (params.model as { api_key: string }).api_key;
      };

      it('keeps it when PUT echoes the mask', async () => {
        const project = await givenProjectWithSkills();
        await givenAgent(t, project, dataShaped);
        const got = await t.http.get(`/api/projects/${project}/agents/TEST_post_agent`).expect(200);
        await t.http
          .put(`/api/projects/${project}/agents/TEST_post_agent`)
          .send({ agent: { model: got.body.model } })
          .expect(200);
        expect(await storedKey(project)).toBe('sk-secret-999');
      });

      it('replaces it when PUT sends a new one', async () => {
        const project = await givenProjectWithSkills();
        await givenAgent(t, project, dataShaped);
        const got = await t.http.get(`/api/projects/${project}/agents/TEST_post_agent`).expect(200);
        await t.http
          .put(`/api/projects/${project}/agents/TEST_post_agent`)
          .send({ agent: { model: { ...got.body.model, api_key: 'sk-new' } } })
          .expect(200);
        expect(await storedKey(project)).toBe('sk-new');
      });
    });

    it('loses no update among 20 concurrent PUTs on one agent', async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, { name: 'busy', params: {} });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.http.put(`/api/projects/${project}/agents/busy`).send({ agent: { params: { [`k${i}`]: i } } }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      const agent = await t.http.get(`/api/projects/${project}/agents/busy`).expect(200);
      expect(agent.body.params).toEqual(
        Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])),
      );
    });
  });

  describe('If-Match', () => {
    /** `busy`, created after the project's three skills: its version (a log position) is past 3. */
    const givenBusy = async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, { name: 'busy', params: {} });
      const got = await t.http.get(`/api/projects/${project}/agents/busy`).expect(200);
      expect(got.headers.etag).not.toBe('"3"');
      return { project, got };
    };

    it('refuses a stale one on PUT (412)', async () => {
      const { project } = await givenBusy();
      expect(
        problemOf(
          await t.http
            .put(`/api/projects/${project}/agents/busy`)
            .set('If-Match', '"3"')
            .send({ agent: {} })
            .expect(412),
        ).status,
      ).toBe(412);
    });

    it('refuses a stale one on DELETE (412)', async () => {
      const { project } = await givenBusy();
      await t.http.delete(`/api/projects/${project}/agents/busy`).set('If-Match', '"3"').expect(412);
      await t.http.get(`/api/projects/${project}/agents/busy`).expect(200);
    });

    it('deletes with the current one (204)', async () => {
      const { project, got } = await givenBusy();
      await t.http
        .delete(`/api/projects/${project}/agents/busy`)
        .set('If-Match', got.headers.etag!)
        .expect(204);
    });
  });

  describe('DELETE', () => {
    it('deletes on the singular (documented) path (204, empty)', async () => {
      const project = await givenProjectWithSkills();
      await givenEditableWithSkills(project);
      const a = await t.http.delete(`/api/projects/${project}/agent/editable`).expect(204);
      expect(a.text).toBe('');
      await t.http.get(`/api/projects/${project}/agents/editable`).expect(404);
    });

    it('deletes on the plural (MindsDB clients) path; deleting again is 404', async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, oldStyle);
      await t.http.delete(`/api/projects/${project}/agents/old_style`).expect(204);
      await t.http.delete(`/api/projects/${project}/agents/old_style`).expect(404);
    });

    it('detaches deleted agents from their skills', async () => {
      const project = await givenProjectWithSkills();
      await givenAgent(t, project, oldStyle);
      await givenEditableWithSkills(project);
      const before = await t.http.get(`/api/projects/${project}/skills`).expect(200);
      expect(before.body.map((s: { agent_ids: number[] }) => s.agent_ids.length)).toEqual([2, 1, 1]);
      await t.http.delete(`/api/projects/${project}/agent/editable`).expect(204);
      await t.http.delete(`/api/projects/${project}/agents/old_style`).expect(204);
      const skills = await t.http.get(`/api/projects/${project}/skills`).expect(200);
      for (const s of skills.body) expect(s.agent_ids).toEqual([]);
    });
  });
});
