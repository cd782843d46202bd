import type { IncomingMessage } from 'node:http';
import type { Response } from 'superagent';
/**
 * Every route of the OpenAPI document, fed generated requests: well-formed ones, shapes that are
 * almost right, hostile path segments and query strings, bodies of every JSON kind and bodies that
 * are not JSON at all. Whatever arrives, the service answers below 500, every refusal is a
 * problem+json naming its own status, and a refused request leaves the log where it was.
 * Beside it, a kill check: a skill look-up that reads its reference with `BigInt()` unchecked (a raw
 * SyntaxError, answered 500) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { resolveSchema, type Operation, type Schema } from '../support/openapi';
import { startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';
import { mariadbParameters } from '../support/external';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { refsReadAsBigInt, whileBugged } from '../support/killChecks';

type Route = { method: string; path: string; operation: Operation };

const SEED = propertySeed();
/**
 * Requests per route (94 routes, about 9 ms a request here). Halved from 30 (issue 62) once the kill
 * check below caught its bug at 15 on every one of 20 fresh seeds; each run's fresh seed sends new
 * requests, and `npm run test:deep` (or FUZZ_RUNS) sends more.
 */
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 15);

/** Names the world below holds, so that most generated requests reach past the 404s. */
const KNOWN = ['mindsdb', 'fuzz_p', 'fz_s', 'fz_a', 'fz_c', 'fz_f', 'fz_d', 'files', 'information_schema'];

/** Path segments a client (or an attacker) may send: names, near-names and undecodable bytes. */
const segment = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...KNOWN) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%ff',
      '%',
      '%zz',
      '%2e%2e',
      '..',
      '%00',
      '%c0%af',
      'a%2Fb',
      '%e2%82',
      '~',
      '*',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constant('a'.repeat(3000)) },
);

/** Names that fit the route (its project, a resource of its kind): these reach the handlers. */
const consistentParams = (route: Route) =>
  fc.tuple(
    ...[...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => {
      const existing: Record<string, string> = {
        project: 'fuzz_p',
        skill: 'fz_s',
        agent: 'fz_a',
        chatbot: 'fz_c',
        database: 'fz_d',
        name: 'fz_f',
        model: 'fz_m',
      };
      return fc.oneof(
        { weight: 3, arbitrary: fc.constant(existing[name!] ?? 'x') },
        { weight: 1, arbitrary: fc.constantFrom('mindsdb', 'fz_new', 'FZ_S', 'fz_s ') },
      );
    }),
  );

const queryString = fc.oneof(
  fc.constant(''),
  fc
    .dictionary(
      fc.constantFrom('limit', 'offset', 'after', 'stream', 'type', 'mode', 'x', 'limit[]', 'q'),
      fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.integer().map(String),
        fc.constantFrom('-1', '1e309', 'NaN', '%ff'),
      ),
      { maxKeys: 3 },
    )
    .map((q) =>
      Object.entries(q)
        .map(([k, v]) => `${encodeURIComponent(k)}=${v.startsWith('%') ? v : encodeURIComponent(v)}`)
        .join('&'),
    ),
);

/**
 * The leaves `shaped` builds values of, made once: an arbitrary is stateless, so one instance draws
 * what a new one would, and building one is not free (a `stringMatching` tries fast-check's list of
 * dangerous strings on its characters, each refusal a thrown error: made anew for every string field
 * of every route, that was a quarter of the file's CPU).
 */
const wild = fc.jsonValue({ maxDepth: 3 });
const nameLike = fc.stringMatching(/^[a-z_][a-z0-9_]{0,12}$/);
const anyString = fc.string({ maxLength: 30 });
const anyNumber = fc.oneof(fc.integer({ min: -5, max: 100 }), fc.double(), wild);
const anyBoolean = fc.oneof(fc.boolean(), wild);

/** A value shaped by the schema, with any field liable to be replaced by arbitrary JSON. */
const shaped = (doc: object, raw: Schema, depth = 0): fc.Arbitrary<unknown> => {
  const s = resolveSchema(doc, raw);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives && depth < 4) return fc.oneof(...alternatives.map((a) => shaped(doc, a, depth + 1)), wild);
  if (s.enum) return fc.oneof(fc.constantFrom(...s.enum), wild);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      if (!s.properties || depth > 4) return fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), wild), wild);
      const fields = Object.fromEntries(
        Object.entries(s.properties).map(([k, v]) => [k, shaped(doc, v, depth + 1)]),
      );
      return fc.oneof(
        { weight: 4, arbitrary: fc.record(fields, { requiredKeys: s.required ?? [] }) },
        { weight: 1, arbitrary: wild },
      );
    }
    case 'array':
      return fc.oneof(fc.array(shaped(doc, s.items ?? {}, depth + 1), { maxLength: 4 }), wild);
    case 'string':
      return fc.oneof(
        { weight: 3, arbitrary: nameLike },
        { weight: 1, arbitrary: anyString },
        { weight: 1, arbitrary: wild },
      );
    case 'integer':
    case 'number':
      return anyNumber;
    case 'boolean':
      return anyBoolean;
    default:
      return wild;
  }
};

type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType: string; text: string }
  | { kind: 'encoded'; encoding: string; text: string }
  | { kind: 'none' };

const bodyFor = (doc: object, operation: Operation): fc.Arbitrary<Body> => {
  const schema = operation.requestBody?.content['application/json']?.schema;
  const raw = fc.oneof(
    fc.constantFrom(
      '{',
      '{"a":',
      'null',
      '[]',
      '"\\ud800"',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
    ),
    fc.string({ maxLength: 60 }),
  );
  return fc.oneof(
    {
      weight: 5,
      arbitrary: (schema ? shaped(doc, schema) : fc.jsonValue({ maxDepth: 3 })).map((value): Body => ({
        kind: 'json',
        value,
      })),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value): Body => ({ kind: 'json', value })) },
    {
      weight: 1,
      arbitrary: raw.map((text): Body => ({ kind: 'raw', contentType: 'application/json', text })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({
          contentType: fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data',
            'application/xml',
            'application/json; charset=latin-7',
          ),
          text: fc.string({ maxLength: 40 }),
        })
        .map((r): Body => ({ kind: 'raw', ...r })),
    },
    {
      // A JSON body under a Content-Encoding it may or may not really have.
      weight: 1,
      arbitrary: fc
        .record({
          encoding: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip'),
          text: fc.oneof(fc.constant('{"name":"enc"}'), fc.string({ maxLength: 20 })),
        })
        .map((r): Body => ({ kind: 'encoded', ...r })),
    },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
  );
};

/** Long generated values shown by their ends, so that a report stays readable. */
const clip = (text: string) =>
  text.length <= 240 ? text : `${text.slice(0, 100)}…(${text.length} chars)…${text.slice(-120)}`;

/**
 * A response parser that stops at the headers of an event stream (the client leaves at once) and
 * reads any other body whole, as JSON when it is.
 */
const untilEventStream = (response: Response, done: (error: Error | null, body: unknown) => void) => {
  // superagent hands a parser Node's response itself (its type says less).
  const res = response as unknown as IncomingMessage;
  if (/^text\/event-stream/.test(res.headers['content-type'] ?? '')) {
    res.destroy();
    done(null, {});
    return;
  }
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (text += chunk));
  res.on('end', () => {
    try {
      done(null, JSON.parse(text));
    } catch {
      done(null, {});
    }
  });
};

const headOf = async (t: TestApp) => (await t.running.ctx.log.head()).position;

/**
 * The log's head each app was last seen at, read once after each request: the next request starts
 * there (nothing is sent in between), so its head is not read again before it. `head()` counts the
 * log, which grows with the accepted requests: read before and after each refusal, it took a third
 * of the property's time on PostgreSQL.
 */
const headsAfter = new WeakMap<TestApp, bigint>();

/** The world the generated requests meet: a project, a database, skills, agents, chatbots and a file. */
const givenFuzzWorld = async (kind: StoreKind): Promise<TestApp> => {
  const t = await startTestApp(kind);
  // A project the generated names sometimes hit, so routes below it are reached too.
  await t.http.post('/api/projects').send({ name: 'fuzz_p' }).expect(201);
  await t.http
    .post('/api/databases')
    .send({ database: { name: 'fz_d', engine: 'mysql', parameters: mariadbParameters() } })
    .expect(201);
  for (const project of ['mindsdb', 'fuzz_p']) {
    const base = `/api/projects/${project}`;
    await t.http
      .post(`${base}/skills`)
      .send({ skill: { name: 'fz_s', type: 'sql', params: { database: 'files', tables: ['fz_f'] } } })
      .expect(201);
    await t.http
      .post(`${base}/agents`)
      .send({ agent: { name: 'fz_a', model_name: 'gpt-4o', skills: ['fz_s'] } })
      .expect(201);
    await t.http
      .post(`${base}/chatbots`)
      .send({ chatbot: { name: 'fz_c', agent_name: 'fz_a', database_name: 'fz_d' } })
      .expect(201);
  }
  await t.http.put('/api/files/fz_f').attach('file', Buffer.from('a,b\n1,x\n2,y\n'), 'fz_f.csv').expect(200);
  return t;
};

describe.each(storeKinds)('every route under generated requests (%s)', (kind) => {
  let t: TestApp;
  /** The kill check's world, built beside the property's (each app's start is mostly waiting). */
  let own: TestApp;
  let routes: Route[] = [];
  let doc: { paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    [t, own] = await Promise.all([givenFuzzWorld(kind), givenFuzzWorld(kind)]);
    doc = (await t.http.get('/api/openapi.json').expect(200)).body;
    routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, operation]) => ({ method, path, operation })),
    );
    // Deletes last, so that the other routes meet the world built above.
    routes.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
  }, 60_000);
  afterAll(async () => {
    await own?.dispose();
    await t?.dispose();
  });

  it('covers the whole document', () => {
    // A route added without an OpenAPI entry would escape this suite.
    expect(routes.length).toBeGreaterThanOrEqual(30);
  });

  /** A generated request to one route: path segments, a query string, a body. */
  const requestTo = (route: Route) =>
    fc.record({
      params: fc.oneof(fc.array(segment, { minLength: 4, maxLength: 4 }), consistentParams(route)),
      query: queryString,
      body: bodyFor(doc, route.operation),
    });
  type Request = typeof requestTo extends (route: Route) => fc.Arbitrary<infer R> ? R : never;

  /**
   * Sends one request to the route and holds its answer to the promise: each promise broken is
   * handed to `violation` (its kind, and the request with its answer); `counts`: the statuses seen.
   */
  const sendAndHold = async (
    t: TestApp,
    route: Route,
    { params, query, body }: Request,
    violation: (kind: string, where: string) => void,
    counts: Record<number, number> = {},
  ) => {
    let i = 0;
    const url = route.path.replace(/\{[^}]+\}/g, () => params[i++]!) + (query ? `?${query}` : '');
    const before = headsAfter.get(t) ?? (await headOf(t));
    const method = route.method as 'get' | 'post' | 'put' | 'delete';
    let req = t.http[method](url);
    if (body.kind === 'json')
      req = req.set('Content-Type', 'application/json').send(JSON.stringify(body.value));
    else if (body.kind === 'raw') req = req.set('Content-Type', body.contentType).send(body.text);
    else if (body.kind === 'encoded')
      req = req
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', body.encoding)
        .send(body.text);
    // A live stream (server-sent events) that opens is not read to an end it never has: its
    // status and headers are the answer, then the client leaves (which ends the stream).
    if (route.path.endsWith('/stream')) req = req.buffer(true).parse(untilEventStream);
    const res = await req;
    counts[res.status] = (counts[res.status] ?? 0) + 1;
    const where = `${clip(url)} ${JSON.stringify(body).slice(0, 200)} → ${res.status} ${(res.text ?? '').slice(0, 200)}`;
    if (res.status >= 500) violation(`answered ${res.status}`, where);
    if (res.status >= 400) {
      if (!/^application\/problem\+json/.test(res.headers['content-type'] ?? ''))
        violation('refusal is not problem+json', where);
      else if (
        res.body?.status !== res.status ||
        typeof res.body?.title !== 'string' ||
        typeof res.body?.detail !== 'string'
      )
        violation('problem lacks title, detail or its status', where);
    }
    const refused = res.status >= 400 || (route.path === '/api/sql/query' && res.body?.type === 'error');
    const after = await headOf(t);
    headsAfter.set(t, after);
    if (refused && after !== before) {
      // The head moves for other writers' commits too: on PostgreSQL it counts only the rows below
      // the cluster's oldest open transaction (the log's read horizon), so another database's long
      // transaction (a spec beside this one in CI) can hold an earlier request's commit back until
      // now. The refusal's own events are the ones carrying its request id.
      const appended = (await t.http.get(`/api/events?after=${before}&limit=500`)).body as {
        events?: { type: string; stream: string; interface: string | null; request_id: string | null }[];
      };
      const own = (appended.events ?? []).filter((e) => e.request_id === res.headers['x-request-id']);
      if (own.length > 0)
        violation(
          'a refusal appended events',
          `${where}\n    appended: ${own.map((e) => `${e.type} on ${e.stream} (${e.interface ?? '?'})`).join(', ')}`,
        );
    }
  };

  it('answers below 500 with a problem+json on every refusal, and refusals append nothing', async () => {
    // Every violation is collected (one per route and kind) so that a failure lists them all.
    const violations = new Map<string, string>();
    const statuses: Record<string, Record<number, number>> = {};
    for (const route of routes) {
      const name = `${route.method.toUpperCase()} ${route.path}`;
      const violation = (kind: string, where: string) => {
        const key = `${name}: ${kind}`;
        if (!violations.has(key)) violations.set(key, where);
      };
      await fc.assert(
        fc.asyncProperty(requestTo(route), async (request) => {
          await sendAndHold(t, route, request, violation, (statuses[name] ??= {}));
        }),
        { seed: SEED, numRuns: propertyRuns(RUNS_PER_ROUTE) },
      );
    }
    if (process.env.FUZZ_STATS) console.log(statuses);
    expect([...violations].map(([k, where]) => `${k}\n    ${where}`)).toEqual([]);
  }, 600_000);

  it('kill check: a skill look-up that reads its reference with BigInt() unchecked (a raw error, a 500) is caught', async () => {
    // The bug: GET …/skills/:skill reads its reference as an id (`String(BigInt(ref))`, leading
    // zeros dropped) unchecked; a name throws a SyntaxError, no domain error, which is answered 500.
    // In a world of its own: the property's accepted requests change the shared one (an admin user
    // created turns sign-in on, and every later request is a 401), and jest --randomize runs either
    // first (CI's seed 521281876 failed so on both stores).
    const route = routes.find(
      (r) => r.method === 'get' && r.path === '/api/projects/{project}/skills/{skill}',
    )!;
    await whileBugged(
      () => refsReadAsBigInt(own.running.services.skills),
      () =>
        expectCaught(
          fc.asyncProperty(requestTo(route), async (request) => {
            let broken = false;
            await sendAndHold(own, route, request, () => (broken = true));
            return !broken;
          }),
          { seed: SEED, numRuns: propertyRuns(RUNS_PER_ROUTE) },
        ),
    );
  }, 60_000);
});
