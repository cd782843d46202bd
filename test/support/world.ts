import { querySql, startTestApp, type SqlAnswer, type StoreKind, type TestApp } from './app';
import { postgresParameters } from './external';

/**
 * The world one API test builds for itself on a shared app: its own project, skills, agents,
 * databases, chatbots, files and models, under names no other test uses. A test that reads a list
 * or a stream scopes it to these names, so it passes alone, in any order, and next to any other test.
 */

let created = 0;

/** A name no other test in this process uses (a valid project, database, file or resource name). */
export const uniqueName = (prefix: string) => `${prefix}_${++created}`;

type Params = Record<string, unknown>;

export type ProjectBody = { id: number; name: string; created_at: string };

export type SkillBody = {
  id: number;
  name: string;
  project_id: number;
  agent_ids: number[];
  type: string;
  params: Params;
  created_at: string;
  updated_at: string;
};

/** An agent in either of its shapes; the tests assert on the fields of the shape they asked for. */
export type AgentBody = {
  id: number;
  name: string;
  project_id: number;
  skills?: SkillBody[];
  params?: Params;
  model?: Params;
};

export type DatabaseBody = { id: number; name: string; engine: string; type: string };

export type ChatbotBody = {
  id: number;
  name: string;
  project_id: number;
  agent_id: number | null;
  database_id: number | null;
  model_name: string;
  params: Params;
  webhook_token: string | null;
  created_at: string;
};

export type FileBody = {
  name: string;
  row_count: number;
  columns: string[];
  column_types: Record<string, string>;
};

export type LoggedEvent = { type: string; data: Params };

/** A project of the test's own, empty but for what the test puts in it. */
export const givenProject = async (t: TestApp, name = uniqueName('proj')): Promise<ProjectBody> =>
  (await t.http.post('/api/projects').send({ name }).expect(201)).body;

export const givenSkill = async (
  t: TestApp,
  project: string,
  skill: { name: string; type?: string; params?: Params },
): Promise<SkillBody> =>
  (
    await t.http
      .post(`/api/projects/${project}/skills`)
      .send({ skill: { type: 'custom', params: {}, ...skill } })
      .expect(201)
  ).body;

/** An agent as POST sends it: `agent` is the request's `agent` object, in either shape. */
export const givenAgent = async (
  t: TestApp,
  project: string,
  agent: { name: string } & Params,
): Promise<AgentBody> =>
  (await t.http.post(`/api/projects/${project}/agents`).send({ agent }).expect(201)).body;

/** An agent named `helper` on an OpenAI-compatible stand-in at `baseUrl` (with its own key, if given), in a new project. */
export const givenAgentOnProvider = async (t: TestApp, baseUrl: string, prefix: string, key?: string) => {
  const { name: project } = await givenProject(t, uniqueName(prefix));
  await givenAgent(t, project, {
    name: 'helper',
    model: {
      model_name: 'gpt-test',
      provider: 'openai',
      base_url: baseUrl,
      ...(key ? { api_key: key } : {}),
    },
  });
  return project;
};

/** A file of the numbers 1, 2, 3 behind a SQL skill `nums` that agent `helper` uses; the file's name. */
export const givenNumbersSkill = async (t: TestApp, project: string) => {
  const file = uniqueName('numbers');
  await t.http
    .put(`/api/files/${file}`)
    .attach('file', Buffer.from('n\n1\n2\n3\n'), `${file}.csv`)
    .expect(200);
  await givenSkill(t, project, {
    name: 'nums',
    type: 'sql',
    params: { database: 'files', tables: [file], description: 'numbers' },
  });
  await t.http
    .put(`/api/projects/${project}/agents/helper`)
    .send({ agent: { skills_to_add: ['nums'] } })
    .expect(200);
  return file;
};

/**
 * An integration registered on one of the machine's real databases (the local PostgreSQL unless
 * told otherwise); its name is the test's own, since databases share one namespace with projects.
 */
export const givenDatabase = async (
  t: TestApp,
  database: { name?: string; engine?: string; parameters?: Params } = {},
): Promise<DatabaseBody> =>
  (
    await t.http
      .post('/api/databases')
      .send({
        database: {
          name: database.name ?? uniqueName('db'),
          engine: database.engine ?? 'postgres',
          parameters: database.parameters ?? postgresParameters(),
        },
      })
      .expect(201)
  ).body;

export const givenChatbot = async (
  t: TestApp,
  project: string,
  chatbot: { name: string } & Params,
): Promise<ChatbotBody> =>
  (await t.http.post(`/api/projects/${project}/chatbots`).send({ chatbot }).expect(201)).body;

/** A file uploaded under the test's own name (files share one namespace: `files.<name>`). */
export const givenFile = async (
  t: TestApp,
  localPath: string,
  name = uniqueName('file'),
): Promise<FileBody> => (await t.http.put(`/api/files/${name}`).attach('file', localPath).expect(200)).body;

/**
 * A model trained to completion in the test's own project from a query over one of its sources,
 * through the SQL statement clients use (training waits: `join_learn_process`).
 */
export const givenTrainedModel = async (
  t: TestApp,
  model: { project: string; name: string; from: string; select: string; predict: string },
): Promise<SqlAnswer> => {
  const answer = await querySql(
    t,
    `CREATE MODEL ${model.project}.${model.name} FROM ${model.from} (${model.select}) PREDICT ${model.predict} USING join_learn_process = true`,
  );
  const status = answer.data?.[0]?.[answer.column_names?.indexOf('STATUS') ?? -1];
  if (status !== 'complete')
    throw new Error(`model ${model.project}.${model.name} did not train: ${JSON.stringify(answer)}`);
  return answer;
};

/** The events of one stream (a project's: `project-<name>`), oldest first. */
export const eventsOf = async (t: TestApp, stream: string): Promise<LoggedEvent[]> =>
  (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body.events;

/**
 * Runs `test` on an app of its own, disposed afterwards: for the few assertions about what a brand-new
 * app holds, which no shared app can answer once other tests wrote to it.
 */
export const onFreshApp = async <T>(
  store: StoreKind,
  test: (t: TestApp) => Promise<T>,
  overrides: Record<string, string> = {},
): Promise<T> => {
  const t = await startTestApp(store, overrides);
  try {
    return await test(t);
  } finally {
    await t.dispose();
  }
};
