/**
 * Every new input of replay and fork, generated hostile (full Unicode with lone surrogates and NUL,
 * huge, deep, empty): the fork's body (messages, thread_id) and the path's run, agent and project.
 * Each is answered (200, or a 4xx problem+json), never a 500; afterwards the service writes, its
 * read model is at the log's head, and a rebuild equals live.
 * Beside it, a kill check: a replay that reports a run, agent or project it cannot find with a
 * plain Error (the 404 losing its kind: a 500) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, type FakeOpenAi } from '../support/fakeOpenAi';
import { clip, hostileJson, hostileString, pathSegment, readyAtHead } from '../support/hostile';
import { rebuildDifferences } from '../support/promise-rebuild';
import { askWithQuery, givenAgentWithSql } from './support';
import { replayMissingAsPlainErrors } from '../support/killChecks';
import { propertyRuns, propertySeed, catches, expectCaughtByOne } from '../support/seed';

const SEED = propertySeed();
const RUNS = Number(process.env.HOSTILE_RUNS ?? 30);

describe.each(storeKinds)('generated values in replay and fork (%s)', (kind) => {
  let t: TestApp;
  let fake: FakeOpenAi | undefined;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => {
    await fake?.close();
    await t.dispose();
  });

  /** The fork's body: messages and thread ids of any shape, or no object at all. */
  const forkBodies = fc.oneof(
    fc.record({ messages: hostileJson, thread_id: hostileJson }, { requiredKeys: [] }),
    fc.record({
      messages: fc.array(
        fc.oneof(
          fc.record({ question: hostileString }),
          fc.record({ role: hostileString, content: hostileString }),
          hostileJson,
        ),
        { maxLength: 3 },
      ),
      thread_id: fc.option(hostileString, { nil: undefined }),
    }),
    hostileJson,
  );
  const pathInputs = fc.tuple(hostileString, fc.boolean(), fc.constantFrom('run', 'agent', 'project'));

  /** The run replayed and forked: an agent whose one run read its SQL. */
  type World = Awaited<ReturnType<typeof givenAgentWithSql>> & { traceId: string };
  let world: World | undefined;
  const given = async (): Promise<World> => {
    if (world) return world;
    const w = await givenAgentWithSql(t, { database: '$project', tables: ['skills'] });
    fake = w.fake;
    const traceId = await askWithQuery(t, w, 'q', `SELECT name FROM ${w.project}.skills`, 'a');
    w.fake.setFallback(fakeReply.text('forked answer'));
    world = { ...w, traceId };
    return world;
  };
  const runsOf = (w: World) => `/api/projects/${w.project}/agents/${w.agent}/runs`;

  /** What an answer broke of the promise (a 5xx, or a 4xx that is no problem+json), if anything. */
  const violationOf = (
    what: string,
    res: { status: number; headers: Record<string, string>; text: string },
  ): string | undefined => {
    if (res.status >= 500) return `${clip(what)} → ${res.status} ${clip(res.text)}`;
    // 431: Node's HTTP parser refuses a request line over its header limit before the app sees it.
    if (
      res.status >= 400 &&
      res.status !== 431 &&
      !/^application\/problem\+json/.test(String(res.headers['content-type']))
    )
      return `${clip(what)} → ${res.status} without problem+json`;
    return undefined;
  };

  /**
   * A generated body sent to the run's fork, as JSON text (supertest cannot send a bare number or
   * string as a value): the violations it made.
   */
  const forked = async (w: World, body: unknown) => {
    const res = await t.http
      .post(`${runsOf(w)}/${w.traceId}/fork`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));
    return [violationOf(`fork ${JSON.stringify(body)}`, res)];
  };

  /** A generated run, agent or project in the replay's and the fork's paths: the violations it made. */
  const atPath = async (w: World, [s, raw, where]: [string, boolean, 'run' | 'agent' | 'project']) => {
    const seg = pathSegment(s, raw);
    const path =
      where === 'run'
        ? `${runsOf(w)}/${seg}`
        : where === 'agent'
          ? `/api/projects/${w.project}/agents/${seg}/runs/${w.traceId}`
          : `/api/projects/${seg}/agents/${w.agent}/runs/${w.traceId}`;
    return [
      violationOf(`GET ${path}/replay`, await t.http.get(`${path}/replay`)),
      violationOf(
        `POST ${path}/fork`,
        await t.http.post(`${path}/fork`).send({ messages: [{ question: 'x' }] }),
      ),
    ];
  };

  it('answers every request (200 or a 4xx problem+json), and the service goes on', async () => {
    const w = await given();
    const { traceId } = w;
    const violations = new Set<string>();
    const note = (found: (string | undefined)[]) => {
      for (const v of found) if (v !== undefined) violations.add(v);
    };
    const base = runsOf(w);
    await fc.assert(
      fc.asyncProperty(forkBodies, async (body) => note(await forked(w, body))),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    await fc.assert(
      fc.asyncProperty(pathInputs, async (input) => note(await atPath(w, input))),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    expect([...violations]).toEqual([]);

    // The service goes on: it replays, writes, and its read model is at the log's head and rebuilds equal.
    const replay = (await t.http.get(`${base}/${traceId}/replay`).expect(200)).body as { unchanged: boolean };
    expect(replay.unchanged).toBe(true);
    await t.http
      .post('/api/projects')
      .send({ name: `after_${process.pid}` })
      .expect(201);
    const ready = await readyAtHead(t);
    expect(ready?.position).toBe(ready?.log_head);
    expect(await rebuildDifferences(t, 7)).toEqual([]);
  }, 600_000);

  it('kill check: a replay that reports what it cannot find with a plain Error (a 500) is caught', async () => {
    // The bug: the replay's look-up of its project, agent and run throws `new Error(…)` for one
    // that is not there, rather than the not-found refusal the error mapper answers 404.
    const w = await given();
    const restore = replayMissingAsPlainErrors(t);
    const clean = (found: (string | undefined)[]) => found.every((v) => v === undefined);
    try {
      // The paths first: every one of them is replayed (the fork's bodies reach no replay).
      await expectCaughtByOne([
        catches(
          fc.asyncProperty(pathInputs, async (input) => clean(await atPath(w, input))),
          { seed: SEED, numRuns: propertyRuns(RUNS) },
        ),
        catches(
          fc.asyncProperty(forkBodies, async (body) => clean(await forked(w, body))),
          { seed: SEED, numRuns: propertyRuns(RUNS) },
        ),
      ]);
    } finally {
      restore();
    }
  }, 600_000);
});
