import { projectAggregate } from '../../src/projects/aggregate';
import { projectStream } from '../../src/shared/projectState';
import { skillByName } from '../../src/skills/state';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenAgent, givenProject, givenSkill } from '../support/world';

const ts = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/;

describe.each(storeKinds)('skills API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  /** A project with an agent `skilled` using `for_agent` and the text2sql skill `good_sql`. */
  const givenSkilledAgent = async (skills = ['for_agent', 'good_sql']) => {
    const { name: project } = await givenProject(t);
    await givenSkill(t, project, { name: 'for_agent', type: 't' });
    await givenSkill(t, project, {
      name: 'good_sql',
      type: 'text2sql',
      params: { database: 'db1', tables: ['t1', { schema: 's', table: 't2' }] },
    });
    const agent = await givenAgent(t, project, {
      name: 'skilled',
      model_name: 'gpt-4o',
      provider: 'openai',
      skills,
    });
    return { project, agent };
  };

  const agentSkillsRow = (project: string) =>
    t.running.ctx.duck.query(`SELECT SKILLS FROM agents WHERE NAME = 'skilled' AND PROJECT = '${project}'`);

  describe('creating and reading', () => {
    it('creates a skill (201) in MindsDB shape', async () => {
      const { name: project } = await givenProject(t);
      const res = await t.http
        .post(`/api/projects/${project}/skills`)
        .send({ skill: { name: 'TEST_create_skill', type: 'Knowledge Base', params: { k1: 'v1' } } })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'TEST_create_skill',
        project_id: expect.any(Number),
        agent_ids: [],
        type: 'Knowledge Base',
        params: { k1: 'v1' },
        created_at: expect.stringMatching(ts),
        updated_at: expect.stringMatching(ts),
      });
    });

    it('reads a skill back by name in any case (project too), its id as ETag', async () => {
      const { name: project } = await givenProject(t);
      const skill = await givenSkill(t, project, {
        name: 'TEST_create_skill',
        type: 'Knowledge Base',
        params: { k1: 'v1' },
      });
      const byName = await t.http
        .get(`/api/projects/${project.toUpperCase()}/skills/test_CREATE_skill`)
        .expect(200);
      expect(byName.body).toEqual(skill);
      expect(byName.headers.etag).toBe(`"${skill.id}"`);
    });

    it('reads a skill back by id', async () => {
      const { name: project } = await givenProject(t);
      const skill = await givenSkill(t, project, {
        name: 'by_id',
        type: 'Knowledge Base',
        params: { k1: 'v1' },
      });
      expect((await t.http.get(`/api/projects/${project}/skills/${skill.id}`).expect(200)).body).toEqual(
        skill,
      );
    });

    it("lists the project's skills", async () => {
      const { name: project } = await givenProject(t);
      const skill = await givenSkill(t, project, {
        name: 'TEST_create_skill',
        type: 'Knowledge Base',
        params: { k1: 'v1' },
      });
      const list = await t.http.get(`/api/projects/${project}/skills/`).expect(200);
      expect(list.body).toEqual([skill]);
    });
  });

  describe('refusals', () => {
    it.each([
      ['no skill', {}, 'body.skill: Must provide "skill" parameter in POST body'],
      [
        'a skill without name',
        { skill: { type: 'x', params: {} } },
        'body.skill.name: Missing "name" field for skill',
      ],
      [
        'a skill without type',
        { skill: { name: 'x', params: {} } },
        'body.skill.type: Missing "type" field for skill',
      ],
      [
        'a skill without params',
        { skill: { name: 'x', type: 'y' } },
        'body.skill.params: Missing "params" field for skill',
      ],
    ])('answers 400 naming what is missing for %s', async (_case, body, detail) => {
      const { name: project } = await givenProject(t);
      expect(
        problemOf(await t.http.post(`/api/projects/${project}/skills`).send(body).expect(400)).detail,
      ).toBe(detail);
    });

    it('answers 404 for skills of an unknown project', async () => {
      const unknownProject = await t.http
        .post('/api/projects/nope/skills')
        .send({ skill: { name: 'x', type: 'y', params: {} } })
        .expect(404);
      expect(problemOf(unknownProject)).toEqual({
        title: 'Project not found',
        detail: 'Project name nope does not exist',
        status: 404,
      });
      await t.http.get('/api/projects/nope/skills').expect(404);
    });

    it('answers 404 for an unknown skill', async () => {
      const { name: project } = await givenProject(t);
      expect(problemOf(await t.http.get(`/api/projects/${project}/skills/ghost`).expect(404)).title).toBe(
        'Skill not found',
      );
    });

    it('refuses a duplicate name regardless of case (409)', async () => {
      const { name: project } = await givenProject(t);
      await givenSkill(t, project, {
        name: 'TEST_create_skill',
        type: 'Knowledge Base',
        params: { k1: 'v1' },
      });
      const dup = await t.http
        .post(`/api/projects/${project}/skills`)
        .send({ skill: { name: 'test_create_skill', type: 'y', params: {} } })
        .expect(409);
      expect(problemOf(dup).detail).toMatch(/already exists/);
    });
  });

  describe('params of known skill types', () => {
    it('refuses invalid params (400) and records nothing', async () => {
      const { name: project } = await givenProject(t);
      const res = await t.http
        .post(`/api/projects/${project}/skills`)
        .send({ skill: { name: 'bad_sql', type: 'sql', params: { tables: ['t1'] } } })
        .expect(400);
      expect(problemOf(res)).toMatchObject({
        title: 'Invalid sql skill',
        detail: expect.stringMatching(/params\.database/),
      });
      await t.http.get(`/api/projects/${project}/skills/bad_sql`).expect(404);
    });

    it('accepts valid params (201)', async () => {
      const { name: project } = await givenProject(t);
      await t.http
        .post(`/api/projects/${project}/skills`)
        .send({
          skill: {
            name: 'good_sql',
            type: 'text2sql',
            params: { database: 'db1', tables: ['t1', { schema: 's', table: 't2' }] },
          },
        })
        .expect(201);
    });
  });

  describe('PUT', () => {
    it('updates a skill (200): params merged, null removes a key', async () => {
      const { name: project } = await givenProject(t);
      await givenSkill(t, project, { name: 'merge_me', type: 't', params: { k1: 'v1', k2: 'v2' } });
      const updated = await t.http
        .put(`/api/projects/${project}/skills/merge_me`)
        .send({ skill: { type: 't2', params: { k1: null, k2: 'v2.1', k3: 'v3' } } })
        .expect(200);
      expect(updated.body).toMatchObject({ name: 'merge_me', type: 't2', params: { k2: 'v2.1', k3: 'v3' } });
    });

    it('creates a missing skill under the URL name, not the body name (201)', async () => {
      const { name: project } = await givenProject(t);
      const created = await t.http
        .put(`/api/projects/${project}/skills/url_name`)
        .send({ skill: { name: 'body_name', type: 'x', params: { a: 1 } } })
        .expect(201);
      expect(created.body).toMatchObject({ name: 'url_name', type: 'x', params: { a: 1 } });
    });

    it('answers 400 when it would create a skill without a type', async () => {
      const { name: project } = await givenProject(t);
      expect(
        problemOf(await t.http.put(`/api/projects/${project}/skills/no_type`).send({ skill: {} }).expect(400))
          .detail,
      ).toMatch(/Missing "type"/);
    });

    it('refuses a stale If-Match on PUT and DELETE (412) and changes nothing', async () => {
      const { name: project } = await givenProject(t);
      await givenSkill(t, project, { name: 'merge_me', type: 't', params: { k1: 'v1', k2: 'v2' } });
      const got = await t.http.get(`/api/projects/${project}/skills/merge_me`).expect(200);
      await t.http
        .put(`/api/projects/${project}/skills/merge_me`)
        .set('If-Match', '"1"')
        .send({ skill: { type: 'zzz' } })
        .expect(412);
      await t.http.delete(`/api/projects/${project}/skills/merge_me`).set('If-Match', '"1"').expect(412);
      expect((await t.http.get(`/api/projects/${project}/skills/merge_me`).expect(200)).body).toEqual(
        got.body,
      );
    });

    it('accepts a PUT whose If-Match is the current ETag, answering a new ETag', async () => {
      const { name: project } = await givenProject(t);
      await givenSkill(t, project, { name: 'merge_me', type: 't', params: { k1: 'v1', k2: 'v2' } });
      const got = await t.http.get(`/api/projects/${project}/skills/merge_me`).expect(200);
      const ok = await t.http
        .put(`/api/projects/${project}/skills/merge_me`)
        .set('If-Match', got.headers.etag!)
        .send({ skill: { type: 'zzz' } })
        .expect(200);
      expect(ok.headers.etag).not.toBe(got.headers.etag);
    });
  });

  describe('secrets', () => {
    const secretive = { api_key: 'sk-live-123', nested: { password: 'pw-456' } };

    /** A project with the skill `secretive`, updated once by a PUT that echoes the masked params. */
    const givenSecretEchoedBack = async () => {
      const { name: project } = await givenProject(t);
      const skill = await givenSkill(t, project, { name: 'secretive', type: 't', params: secretive });
      await t.http
        .put(`/api/projects/${project}/skills/secretive`)
        .send({ skill: { params: { ...skill.params, extra: 1 } } })
        .expect(200);
      return project;
    };

    it('masks secrets in the answer', async () => {
      const { name: project } = await givenProject(t);
      const res = await t.http
        .post(`/api/projects/${project}/skills`)
        .send({ skill: { name: 'secretive', type: 't', params: secretive } })
        .expect(201);
      expect(res.body.params).toEqual({ api_key: '******', nested: { password: '******' } });
    });

    it('keeps secrets out of the projection and of the events served', async () => {
      const project = await givenSecretEchoedBack();
      const rows = await t.running.ctx.duck.query(
        `SELECT PARAMS FROM skills WHERE NAME = 'secretive' AND PROJECT = '${project}'`,
      );
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toMatch(/sk-live-123|pw-456/);
      const events = await t.http.get(`/api/events?stream=project-${project}&limit=1000`).expect(200);
      expect(JSON.stringify(events.body)).not.toMatch(/sk-live-123|pw-456/);
    });

    it('keeps the stored secrets when PUT sends the mask back', async () => {
      const project = await givenSecretEchoedBack();
      const { state } = await t.running.ctx.commands.load(projectStream(project), projectAggregate);
      const skill = skillByName(state.skills, 'secretive')!;
      expect(skill.params).toEqual({ api_key: 'sk-live-123', nested: { password: 'pw-456' }, extra: 1 });
    });
  });

  describe('skills of agents', () => {
    it('filters skills by agent name (any case) and shows agent_ids', async () => {
      const { project, agent } = await givenSkilledAgent();
      const byName = await t.http.get(`/api/projects/${project}/skills?agent=SKILLED`).expect(200);
      expect(byName.body.map((s: { name: string }) => s.name).sort()).toEqual(['for_agent', 'good_sql']);
      for (const s of byName.body) expect(s.agent_ids).toEqual([agent.id]);
    });

    it('filters skills by agent id as by its name', async () => {
      const { project, agent } = await givenSkilledAgent();
      const byName = await t.http.get(`/api/projects/${project}/skills?agent=SKILLED`).expect(200);
      const byId = await t.http.get(`/api/projects/${project}/skills?agent=${agent.id}`).expect(200);
      expect(byId.body).toEqual(byName.body);
    });

    it('answers 404 when filtering by an unknown agent', async () => {
      const { project } = await givenSkilledAgent();
      expect(
        problemOf(await t.http.get(`/api/projects/${project}/skills?agent=ghost`).expect(404)).title,
      ).toBe('Agent not found');
    });

    it('deletes a skill (204, empty): it is 404 afterwards', async () => {
      const { project } = await givenSkilledAgent();
      const res = await t.http.delete(`/api/projects/${project}/skills/for_agent`).expect(204);
      expect(res.text).toBe('');
      await t.http.get(`/api/projects/${project}/skills/for_agent`).expect(404);
    });

    it('deleting a skill detaches it from its agents, and the log says so', async () => {
      const { project } = await givenSkilledAgent();
      await t.http.delete(`/api/projects/${project}/skills/for_agent`).expect(204);
      const agent = await t.http.get(`/api/projects/${project}/agents/skilled`).expect(200);
      expect(agent.body.skills.map((s: { name: string }) => s.name)).toEqual(['good_sql']);
      const events = await eventsOf(t, `project-${project}`);
      const last = events.slice(-2).map((e) => e.type);
      expect(last).toEqual(['SkillDeleted', 'SkillDetachedFromAgent']);
      expect(await agentSkillsRow(project)).toEqual([{ SKILLS: ['good_sql'] }]);
    });

    it('renaming a skill renames it in the agents projection', async () => {
      const { project } = await givenSkilledAgent(['good_sql']);
      await t.http
        .put(`/api/projects/${project}/skills/good_sql`)
        .send({ skill: { name: 'renamed_sql' } })
        .expect(200);
      expect(await agentSkillsRow(project)).toEqual([{ SKILLS: ['renamed_sql'] }]);
    });
  });
});
