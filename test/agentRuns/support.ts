import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { querySql, type TestApp } from '../support/app';

let counter = 0;
export const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;

export type AgentWorld = { project: string; agent: string; fake: FakeOpenAi; key: string };

/** A project with one agent whose model is its own fake provider, reading `tables` of `database`. */
export const givenAgentWithSql = async (
  t: TestApp,
  sql: { database: string; tables: string[] } | null,
  model: Record<string, unknown> = {},
): Promise<AgentWorld> => {
  const fake = await startFakeOpenAi();
  const project = unique('p');
  const agent = unique('a');
  const key = `sk-agent-${unique('key')}`;
  await t.http.post('/api/projects').send({ name: project }).expect(201);
  const skills: string[] = [];
  if (sql) {
    const skill = unique('s');
    await t.http
      .post(`/api/projects/${project}/skills`)
      .send({
        skill: {
          name: skill,
          type: 'sql',
          params: { database: sql.database === '$project' ? project : sql.database, tables: sql.tables },
        },
      })
      .expect(201);
    skills.push(skill);
  }
  await t.http
    .post(`/api/projects/${project}/agents`)
    .send({
      agent: {
        name: agent,
        model: { model_name: 'gpt-test', provider: 'openai', api_key: key, base_url: fake.baseUrl, ...model },
        skills,
      },
    })
    .expect(201);
  return { project, agent, fake, key };
};

/** The agent asked once: it runs `query` with its SQL tool, then answers `answer`. */
export const askWithQuery = async (
  t: TestApp,
  w: AgentWorld,
  question: string,
  query: string,
  answer: string,
  extra: Record<string, unknown> = {},
) => {
  w.fake.enqueue(fakeReply.toolCall('sql_db_query', { query }));
  w.fake.enqueue(fakeReply.text(answer));
  const res = await t.http
    .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
    .send({ messages: [{ question, answer: null }], ...extra })
    .expect(200);
  return (res.body as { message: { trace_id: string } }).message.trace_id;
};

export const runOf = async (t: TestApp, w: AgentWorld, traceId: string) =>
  (await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}`).expect(200)).body as {
    answer: string;
    steps: { seq: number; kind: string; name: string; sql: string | null; rows: number | null }[];
  };

export type Replay = {
  trace_id: string;
  answer: string | null;
  status: string;
  model_calls: number;
  unchanged: boolean;
  changed_steps: number[];
  steps: {
    seq: number;
    kind: string;
    name: string;
    sql?: string | null;
    recorded?: { ok: boolean; rows: number | null };
    replay?: {
      compared: string;
      differs?: boolean;
      as_of?: { rows?: number } | null;
      now?: { rows?: number };
    };
  }[];
};

export const replayOf = async (t: TestApp, w: AgentWorld, traceId: string) =>
  (await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}/replay`).expect(200))
    .body as Replay;

export const eventsOf = async (t: TestApp, stream: string) =>
  (
    (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body as {
      events: { type: string; data: Record<string, unknown> }[];
    }
  ).events;

export const sqlOk = async (t: TestApp, query: string) => {
  const answer = await querySql(t, query);
  if (answer.type === 'error') throw new Error(`${query}: ${answer.error_message}`);
  return answer;
};
