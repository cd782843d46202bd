/**
 * Malformed requests answered 500 (43 cases of the robustness issue): undecodable percent-encoding
 * in a path, bodies whose Content-Encoding does not decode, JSON nested thousands of levels deep.
 * Each must be a 4xx problem+json naming what is wrong, echoing no more than a few characters of
 * the input, and appending nothing to the log.
 */
import zlib from 'node:zlib';
import { MAX_DETAIL_CHARS } from '../../src/http/problem';
import { BODY_ENVELOPE_DEPTH, jsonTextExceedsDepth, valueExceedsDepth } from '../../src/http/jsonBody';
import { problemOf, startTestApp, type TestApp } from '../support/app';

describe('malformed requests are 4xx problems, never 500', () => {
  let t: TestApp;
  const maxDepth = 64 + BODY_ENVELOPE_DEPTH;
  const logSize = async () => (await t.running.ctx.log.head()).events;
  let eventsBefore = 0;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { BODY_LIMIT: '256kb', MAX_JSON_DEPTH: '64' });
    await t.http.post('/api/projects').send({ name: 'p1' }).expect(201);
    await t.http
      .post('/api/projects/p1/skills')
      .send({ skill: { name: 's1', type: 'text', params: {} } })
      .expect(201);
  });
  beforeEach(async () => {
    eventsBefore = await logSize();
  });
  afterEach(async () => {
    // Every request below is refused: none of them may have written anything.
    expect(await logSize()).toBe(eventsBefore);
  });
  afterAll(() => t.dispose());

  const expectProblem = (
    res: { status: number; headers: Record<string, string>; body: unknown },
    status: number,
    title: string | RegExp,
    detail: RegExp,
  ) => {
    expect(res.status).toBe(status);
    const p = problemOf(res);
    expect(p.status).toBe(status);
    expect(p.title).toMatch(title);
    expect(p.detail).toMatch(detail);
    expect(p.detail.length).toBeLessThanOrEqual(MAX_DETAIL_CHARS + 40);
    return p;
  };

  describe('percent-encoding in the path', () => {
    const segments = ['%ff', '%', '%e2%82', '%zz', '%c0'];
    const routes: [method: 'get' | 'put' | 'delete' | 'post', path: (s: string) => string][] = [
      ['get', (s) => `/api/projects/${s}`],
      ['delete', (s) => `/api/projects/${s}`],
      ['get', (s) => `/api/databases/${s}`],
      ['put', (s) => `/api/databases/${s}`],
      ['get', (s) => `/api/projects/${s}/skills`],
      ['get', (s) => `/api/projects/p1/skills/${s}`],
      ['put', (s) => `/api/projects/p1/skills/${s}`],
      ['delete', (s) => `/api/projects/p1/skills/${s}`],
      ['get', (s) => `/api/projects/p1/agents/${s}`],
      ['put', (s) => `/api/projects/p1/chatbots/${s}`],
      ['get', (s) => `/api/projects/p1/models/${s}`],
      ['post', (s) => `/api/projects/p1/models/${s}/predict`],
      ['delete', (s) => `/api/files/${s}`],
    ];
    it.each(routes.flatMap(([m, p]) => segments.map((s) => [m, p(s), s] as const)))(
      '%s %s answers 400 naming the segment',
      async (method, path, segment) => {
        const req = t.http[method](path);
        const res = method === 'put' || method === 'post' ? await req.send({}) : await req;
        expectProblem(
          res,
          400,
          'Malformed path',
          new RegExp(`segment "${segment}" is not valid percent-encoded`),
        );
      },
    );

    it('quotes at most 100 characters of a long undecodable segment', async () => {
      const res = await t.http.get(`/api/projects/${'%ff'.repeat(2000)}`);
      const p = expectProblem(res, 400, 'Malformed path', /is not valid percent-encoded/);
      expect(p.detail.length).toBeLessThan(250);
    });

    it('a 404 for a long unknown path names it cut short', async () => {
      const res = await t.http.get(`/api/${'x'.repeat(8000)}`);
      const p = expectProblem(res, 404, 'Not found', /GET \/api\/x+… \(\d+ more characters\)$/);
      expect(p.detail.length).toBeLessThan(400);
    });
  });

  describe('Content-Encoding', () => {
    const post = (encoding: string, body: Buffer) =>
      t.http
        .post('/api/projects')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        // superagent would JSON-encode a Buffer sent as application/json; these are the bytes to send.
        .serialize((bytes: unknown) => bytes as string)
        .send(body);

    it('an unknown encoding is a 415 naming it', async () => {
      expectProblem(
        await post('br2', Buffer.from('{"name":"enc1"}')),
        415,
        'Unsupported media type',
        /Content-Encoding "br2"/,
      );
    });

    it.each([
      ['gzip', Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9])],
      ['gzip', Buffer.concat([zlib.gzipSync('{"name":"enc2"}').subarray(0, 12), Buffer.from('garbage')])],
      ['deflate', Buffer.from('this is not deflate data')],
      ['br', Buffer.from('this is not brotli data at all')],
      ['GZIP', Buffer.from('plain text, said to be gzip')],
    ])('a body that is not valid %s is a 400 naming the encoding', async (encoding, body) => {
      expectProblem(
        await post(encoding, body),
        400,
        'Malformed body',
        new RegExp(`not valid "${encoding.toLowerCase()}" data`),
      );
    });

    it('a valid gzip body still works (and a zip bomb stops at the body limit)', async () => {
      await post('gzip', zlib.gzipSync('{"name":"gz_ok"}')).expect(201);
      eventsBefore = await logSize();
      expectProblem(
        await post('gzip', zlib.gzipSync(Buffer.alloc(20_000_000, 0x20))),
        413,
        'Payload too large',
        /exceeds the limit of 262144 bytes/,
      );
    });
  });

  describe('JSON', () => {
    const post = (path: string, text: string) =>
      t.http.post(path).set('Content-Type', 'application/json').send(text);

    it('invalid JSON is a 400 quoting a few characters at most', async () => {
      const p = expectProblem(
        await post('/api/projects', `{"name": ${'y'.repeat(200_000)}`),
        400,
        'Malformed JSON',
        /not valid JSON/,
      );
      expect(p.detail.length).toBeLessThan(300);
    });

    it('a scalar body is a 400 saying an object or array is needed', async () => {
      for (const text of ['"x"', 'null', '42', 'true'])
        expectProblem(
          await post('/api/projects', text),
          400,
          'Malformed JSON',
          /must be a JSON object or array/,
        );
    });

    it.each([
      [
        'arrays',
        (n: number) => `{"skill":{"name":"d","type":"text","params":{"x":${'['.repeat(n)}${']'.repeat(n)}}}}`,
      ],
      [
        'objects',
        (n: number) => `{"skill":{"name":"d","type":"text","params":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}}`,
      ],
    ])('a body nested far too deep (%s) is refused before it is parsed', async (_kind, text) => {
      // 40,000 levels of `{"a":` stay under the 256 KiB body limit.
      for (const depth of [maxDepth + 1, 5_000, 40_000])
        expectProblem(
          await post('/api/projects/p1/skills', text(depth)),
          400,
          'Value out of bounds',
          new RegExp(
            `nested deeper than 64 levels \\(MAX_JSON_DEPTH\\); the body as a whole may nest ${maxDepth}`,
          ),
        );
    });

    it('brackets inside strings do not count, escaped quotes do not end a string', async () => {
      const text = JSON.stringify({
        skill: { name: 'brackets', type: 'text', params: { s: '[[[{{\\"['.repeat(500) } },
      });
      await post('/api/projects/p1/skills', text).expect(201);
      eventsBefore = await logSize();
    });

    it('a value just past MAX_JSON_DEPTH still gets the contract message naming the field', async () => {
      const params = { x: JSON.parse(`${'['.repeat(64)}${']'.repeat(64)}`) as unknown };
      expectProblem(
        await t.http.post('/api/projects/p1/skills').send({ skill: { name: 'deep', type: 'text', params } }),
        400,
        'Value out of bounds',
        /params/,
      );
    });

    it('the SQL endpoint refuses deep parameters as a 400 (it answered a stack overflow)', async () => {
      expectProblem(
        await post(
          '/api/sql/query',
          `{"query":"select 1","params":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`,
        ),
        400,
        'Value out of bounds',
        /nested deeper/,
      );
    });

    it('UTF-16 bodies are measured after the parse', async () => {
      const text = `{"skill":{"name":"u16","type":"text","params":{"x":${'['.repeat(200)}${']'.repeat(200)}}}}`;
      const res = await t.http
        .post('/api/projects/p1/skills')
        .set('Content-Type', 'application/json; charset=utf-16le')
        .serialize((bytes: unknown) => bytes as string)
        .send(Buffer.from(text, 'utf16le'));
      expectProblem(res, 400, 'Value out of bounds', /nested deeper/);
    });

    it('a body over the limit is a 413 naming the limit', async () => {
      expectProblem(
        await t.http.post('/api/projects').send({ name: 'x'.repeat(300_000) }),
        413,
        'Payload too large',
        /262144 bytes/,
      );
    });
  });

  describe('multipart bodies (a file upload, a BYOM engine)', () => {
    const uploads: [method: 'put' | 'post', path: string][] = [
      ['put', '/api/files/upload_me'],
      ['post', '/api/handlers/byom/engine_me'],
    ];
    it.each(uploads)('%s %s without a boundary: 400 naming the malformed body', async (method, path) => {
      const res = await t.http[method](path).set('Content-Type', 'multipart/form-data').send('x');
      expectProblem(res, 400, /./, /^Malformed multipart body: .*[Bb]oundary/);
    });
    // Each route cut off inside a part it reads and inside one it skips: a skipped part is destroyed
    // with the parser's error too, and an 'error' nobody listens to ended the process.
    const cutOff = uploads.flatMap(([method, path]) =>
      ['file', 'code', 'other'].map((field) => [method, path, field] as const),
    );
    it.each(cutOff)(
      '%s %s cut off inside a part named %s: 400 naming the malformed body',
      async (method, path, field) => {
        const res = await t.http[method](path)
          .set('Content-Type', 'multipart/form-data; boundary=XyZ')
          .send(`--XyZ\r\nContent-Disposition: form-data; name="${field}"; filename="a.csv"\r\n\r\na,b\n1,2`);
        expectProblem(res, 400, /./, /^Malformed multipart body: Unexpected end of form/);
      },
    );
  });
});

describe('depth measures', () => {
  it('count nesting on bytes as the parse would', () => {
    const depthOf = (text: string) => {
      for (let d = 0; ; d++) if (!jsonTextExceedsDepth(Buffer.from(text), d)) return d;
    };
    expect(depthOf('1')).toBe(0);
    expect(depthOf('{}')).toBe(1);
    expect(depthOf('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(depthOf('{"a":"[[[[\\"{{{{"}')).toBe(1);
    expect(depthOf('["\\\\", [[]]]')).toBe(3);
    expect(depthOf('{"é[":"ü{"}')).toBe(1);
  });

  it('count nesting on values iteratively (a million levels do not overflow the stack)', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(valueExceedsDepth(deep, 100)).toBe(true);
    expect(valueExceedsDepth({ a: [1, { b: [] }] }, 4)).toBe(false);
    expect(valueExceedsDepth({ a: [1, { b: [] }] }, 3)).toBe(true);
  });
});
