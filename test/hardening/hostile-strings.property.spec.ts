/**
 * The rule: an event the contract accepts is projectable on every store and every read model,
 * forever. Generated strings (full Unicode with lone surrogates, NUL, U+FFFE/U+FFFF, RTL marks,
 * combining runs, very long, empty) go into every string field of every write route of the OpenAPI
 * document and into SQL texts that store what they hold (views, jobs, skills, projects). Each request
 * is refused with a 4xx (or a SQL error) or its events are projected; afterwards writes succeed,
 * the service is ready at the log's head, and a rebuild from the log equals the live read model.
 * Beside it, a kill check: a log that wraps its append failures in a plain Error (the contract's
 * refusal of a NUL or a lone surrogate loses its kind and is answered 500) is caught at the count
 * `npm test` runs.
 */
import fc from 'fast-check';
import { ADMIN, login } from '../auth/support';
import { resolveSchema, type Operation, type Schema } from '../support/openapi';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { rebuildDifferences } from '../support/promise-rebuild';
import { hostileString, withLoneSurrogate } from '../support/hostile';
import { propertyRuns, propertySeed, catches, expectCaughtByOne } from '../support/seed';
import { appendFailuresAsPlainErrors } from '../support/killChecks';

const SEED = propertySeed();
const RUNS_PER_ROUTE = Number(process.env.HOSTILE_RUNS ?? 12);

type Route = { method: 'post' | 'put' | 'patch'; path: string; operation: Operation };

const likelyLone = withLoneSurrogate(hostileString);

/**
 * A value of the schema's shape, every string a hostile one: the request reaches the field's own
 * checks (and the event, when they let it through) rather than stopping at the body's shape.
 */
const shaped = (doc: object, raw: Schema, depth = 0): fc.Arbitrary<unknown> => {
  const s = resolveSchema(doc, raw);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives && depth < 4) return fc.oneof(...alternatives.map((a) => shaped(doc, a, depth + 1)));
  if (s.enum) return fc.constantFrom(...s.enum);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object':
      if (!s.properties || depth > 4) return fc.dictionary(likelyLone, likelyLone, { maxKeys: 2 });
      return fc.record(
        Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, shaped(doc, v, depth + 1)])),
        { requiredKeys: s.required ?? [] },
      );
    case 'array':
      return fc.array(shaped(doc, s.items ?? {}, depth + 1), { maxLength: 2 });
    case 'string':
      return likelyLone;
    case 'integer':
    case 'number':
      return fc.integer({ min: 0, max: 5 });
    case 'boolean':
      return fc.boolean();
    default:
      return likelyLone;
  }
};

/** SQL statements that store the text they are given in an event. */
const sqlText = fc.oneof(
  likelyLone.map((s) => `CREATE VIEW mindsdb.hv AS (SELECT '${s.replace(/'/g, "''")}' AS a)`),
  likelyLone.map((s) => `CREATE JOB mindsdb.hj (SELECT '${s.replace(/'/g, "''")}' AS a) EVERY hour`),
  likelyLone.map((s) => `CREATE SKILL mindsdb.hs USING type='${s.replace(/'/g, "''")}'`),
  likelyLone.map((s) => `CREATE PROJECT \`${s.replace(/`/g, '``')}\``),
  likelyLone.map((s) => `CREATE AGENT mindsdb.\`${s.replace(/`/g, '``')}\` USING model='gpt-4o'`),
  // A chatbot on the built-in channel (no database): its name and a parameter of the client's.
  likelyLone.map((s) => `CREATE CHATBOT mindsdb.\`${s.replace(/`/g, '``')}\` USING agent='hs_a'`),
  likelyLone.map((s) => `CREATE CHATBOT mindsdb.hc USING agent='hs_a', prompt='${s.replace(/'/g, "''")}'`),
  // Writes into files: a name, a column and a value of the client's.
  likelyLone.map((s) => `CREATE OR REPLACE TABLE files.hf (SELECT '${s.replace(/'/g, "''")}' AS a)`),
  likelyLone.map((s) => `INSERT INTO files.hf (SELECT '${s.replace(/'/g, "''")}' AS a)`),
  likelyLone.map(
    (s) => `CREATE TABLE files.\`${s.replace(/`/g, '``')}\` (SELECT 1 AS \`${s.replace(/`/g, '``')}\`)`,
  ),
  // A secret inside a stored statement (sealed in place), and a job dropped with FORGET.
  likelyLone.map(
    (s) =>
      `CREATE JOB mindsdb.hj (CREATE DATABASE IF NOT EXISTS hd WITH ENGINE = 'postgres', PARAMETERS = {"password": '${s.replace(/'/g, "''")}'}) EVERY hour`,
  ),
  likelyLone.map((s) => `DROP JOB IF EXISTS mindsdb.\`${s.replace(/`/g, '``')}\` FORGET`),
  likelyLone,
);

/** Names the world holds, so that generated requests reach past the 404s. */
const PARAMS: Record<string, string> = { project: 'mindsdb', skill: 'hs_s', agent: 'hs_a', name: 'hs_f' };

const clip = (text: string) => (text.length <= 200 ? text : `${text.slice(0, 100)}…(${text.length})`);

describe.each(storeKinds)('generated strings in every write (%s)', (kind) => {
  let t: TestApp;
  let admin: string;
  let routes: Route[] = [];
  let doc: { paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    // Sign-in on, as the admin: the routes only signed-in users reach (tokens, users) are written too.
    t = await startTestApp(kind, { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password });
    admin = await login(t, ADMIN.name, ADMIN.password);
    await t.http
      .post('/api/projects/mindsdb/skills')
      .set('Cookie', admin)
      .send({ skill: { name: 'hs_s', type: 'text', params: {} } })
      .expect(201);
    await t.http
      .post('/api/projects/mindsdb/agents')
      .set('Cookie', admin)
      .send({ agent: { name: 'hs_a', model_name: 'gpt-4o' } })
      .expect(201);
    doc = (await t.http.get('/api/openapi.json').set('Cookie', admin).expect(200)).body;
    routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method]) => ['post', 'put', 'patch'].includes(method))
        // Uploads take files, not JSON; signing out would end the admin's session.
        .filter(([, op]) => op.requestBody?.content['application/json'] !== undefined)
        .filter(() => !/logout/.test(path))
        .map(([method, operation]) => ({ method: method as Route['method'], path, operation })),
    );
  }, 60_000);
  afterAll(async () => t.dispose());

  /** A generated body sent to a write route: the promise it broke (a 5xx), if any, and whether it was accepted. */
  const sendHostileBody = async (route: Route, body: unknown) => {
    const url = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => PARAMS[name] ?? 'x');
    const res = await t.http[route.method](url)
      .set('Cookie', admin)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));
    return {
      violation:
        res.status >= 500
          ? `${route.method.toUpperCase()} ${route.path} → ${res.status} ${clip(res.text)} for ${clip(JSON.stringify(body))}`
          : undefined,
      accepted: res.status < 400,
    };
  };

  /** A generated SQL text sent to the SQL endpoint, then what it made dropped: as `sendHostileBody`. */
  const sendHostileSql = async (query: string) => {
    const res = await t.http.post('/api/sql/query').set('Cookie', admin).send({ query });
    const violation =
      res.status !== 200 || res.body?.error_code === 1105
        ? `SQL ${clip(query)} → ${res.status} ${clip(res.text)}`
        : undefined;
    // A statement that made something is undone, so that the next one can make it again.
    for (const drop of [
      'DROP VIEW IF EXISTS mindsdb.hv',
      'DROP JOB IF EXISTS mindsdb.hj',
      'DROP SKILL IF EXISTS mindsdb.hs',
    ])
      await t.http.post('/api/sql/query').set('Cookie', admin).send({ query: drop });
    return { violation, accepted: res.body?.type !== 'error' };
  };

  const bodyOf = (route: Route) =>
    shaped(doc, route.operation.requestBody!.content['application/json']!.schema);

  it('refuses or projects every one, and the service goes on: writes, readiness at the head, rebuild equals live', async () => {
    expect(routes.length).toBeGreaterThanOrEqual(15);
    const violations = new Set<string>();
    let accepted = 0;
    const count = (sent: { violation: string | undefined; accepted: boolean }) => {
      if (sent.violation !== undefined) violations.add(sent.violation);
      if (sent.accepted) accepted++;
    };
    for (const route of routes)
      await fc.assert(
        fc.asyncProperty(bodyOf(route), async (body) => count(await sendHostileBody(route, body))),
        { seed: SEED, numRuns: propertyRuns(RUNS_PER_ROUTE) },
      );
    await fc.assert(
      fc.asyncProperty(sqlText, async (query) => count(await sendHostileSql(query))),
      { seed: SEED, numRuns: propertyRuns(60) },
    );
    expect([...violations]).toEqual([]);
    // Some generated values are fine Unicode: the run accepted writes, not only refusals.
    expect(accepted).toBeGreaterThan(0);
    if (process.env.HOSTILE_STATS) console.log({ accepted, head: (await t.running.ctx.log.head()).position });

    await t.http
      .post('/api/projects/mindsdb/skills')
      .set('Cookie', admin)
      .send({ skill: { name: 'after_the_run', type: 'text', params: {} } })
      .expect(201);
    // Read back: a skill write answers ahead of the read model; the read waits for it.
    await t.http.get('/api/projects/mindsdb/skills/after_the_run').set('Cookie', admin).expect(200);
    const ready = (await t.http.get('/api/ready').expect(200)).body as { position: string; log_head: string };
    expect(ready.position).toBe(ready.log_head);
    const status = (await t.http.get('/api/status').set('Cookie', admin).expect(200)).body as {
      read_model: { failed: unknown };
    };
    expect(status.read_model.failed).toBeNull();

    expect(await rebuildDifferences(t, 7)).toEqual([]);
  }, 600_000);

  it("kill check: a log that wraps its append failures in a plain Error (a refusal's kind lost: a 500) is caught", async () => {
    // The bug: the log's append rethrows what failed as `new Error(…)`, so the contract's refusal
    // of a NUL or a lone surrogate (a ZodError) and the store's (AppendRefused) reach the command
    // runner as no refusal it knows, and the request is answered as the server's own failure.
    const restore = appendFailuresAsPlainErrors(t);
    try {
      const keeps = async (sent: Promise<{ violation: string | undefined }>) =>
        (await sent).violation === undefined;
      await expectCaughtByOne([
        ...routes.map((route) =>
          catches(
            fc.asyncProperty(bodyOf(route), (body) => keeps(sendHostileBody(route, body))),
            { seed: SEED, numRuns: propertyRuns(RUNS_PER_ROUTE) },
          ),
        ),
        catches(
          fc.asyncProperty(sqlText, (query) => keeps(sendHostileSql(query))),
          { seed: SEED, numRuns: propertyRuns(60) },
        ),
      ]);
    } finally {
      restore();
    }
  }, 600_000);
});
