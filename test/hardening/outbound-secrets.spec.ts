import http from 'node:http';
import net from 'node:net';
import { canonicalHost, isPublicAddress, outboundPolicy } from '../../src/http/outbound';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { postgresParameters } from '../support/external';
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject, uniqueName } from '../support/world';

/**
 * Issue 36: a stored or server-side secret goes only to the destination it was stored for, and
 * every outbound call passes one policy (OUTBOUND_ALLOW). A listener on 127.0.0.1 plays the
 * attacker's server: it records every connection, and every request's headers and body.
 */
type Recorded = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

const startListener = async (
  host = '127.0.0.1',
  handle?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean,
) => {
  const requests: Recorded[] = [];
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (handle?.(req, res)) return;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'who are you', type: 'invalid_request_error' } }));
    });
  });
  server.on('connection', (s: net.Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: (path = '') => `http://${host}:${port}${path}`,
    requests: () => requests,
    connections: () => connections,
    /** Everything the listener saw, as one text to search for secrets. */
    seen: () => JSON.stringify(requests),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
};
type Listener = Awaited<ReturnType<typeof startListener>>;

/**
 * A PostgreSQL impostor: answers a client's startup with "send your password in clear"
 * (AuthenticationCleartextPassword) and records every byte it gets.
 */
const startPgImpostor = async () => {
  let raw = '';
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString('latin1');
      if (chunk[0] === 0x70) socket.destroy();
      else socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    raw: () => raw,
    connections: () => connections,
    close: () => new Promise((r) => server.close(r)),
  };
};

describe('the outbound policy: addresses', () => {
  it('reads numeric and mapped host forms as the address they stand for', () => {
    expect(canonicalHost('2130706433')).toBe('127.0.0.1');
    expect(canonicalHost('127.1')).toBe('127.0.0.1');
    expect(canonicalHost('0x7f.1')).toBe('127.0.0.1');
    expect(canonicalHost('0177.0.0.1')).toBe('127.0.0.1');
    expect(canonicalHost('[::ffff:127.0.0.1]')).toBe('127.0.0.1');
    expect(canonicalHost('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(canonicalHost('Example.COM.')).toBe('example.com');
  });

  it('refuses loopback, private, link-local and reserved addresses; admits public ones', () => {
    for (const a of [
      '127.0.0.1',
      '0.0.0.0',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      '::',
      'fc00::1',
      'fd12::1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
    ])
      expect([a, isPublicAddress(a)]).toEqual([a, false]);
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111'])
      expect([a, isPublicAddress(a)]).toEqual([a, true]);
  });

  it('refuses every form of loopback unless OUTBOUND_ALLOW lists it, resolving names', async () => {
    const strict = outboundPolicy('');
    for (const host of [
      '127.0.0.1',
      '127.1',
      '2130706433',
      '0x7f.1',
      '0.0.0.0',
      '[::1]',
      'localhost',
      '::ffff:127.0.0.1',
    ])
      await expect(strict.checkHost(host, 'Test')).rejects.toMatchObject({
        kind: 'Forbidden',
        detail: expect.stringContaining('OUTBOUND_ALLOW'),
      });
    await expect(strict.checkUrl('file:///etc/passwd', 'Test')).rejects.toMatchObject({ kind: 'Invalid' });
    const local = outboundPolicy('127.0.0.1, 10.0.0.0/8');
    await expect(local.checkHost('2130706433', 'Test')).resolves.toBeDefined();
    await expect(local.checkHost('localhost', 'Test')).resolves.toBeDefined();
    await expect(local.checkHost('10.9.9.9', 'Test')).resolves.toBeDefined();
    await expect(local.checkHost('192.168.0.1', 'Test')).rejects.toMatchObject({ kind: 'Forbidden' });
    expect(() => outboundPolicy('10.0.0.0/99')).toThrow(/OUTBOUND_ALLOW/);
  });
});

describe.each(storeKinds)('stored and server secrets reach only their own destination, on %s', (store) => {
  const SERVER_KEY = `sk-server-${Math.random().toString(36).slice(2)}`;
  let t: TestApp;
  let fake: FakeOpenAi;
  let listener: Listener;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    listener = await startListener();
    // Loopback allowed (the fakes live there): what is tested is the binding of keys to URLs.
    t = await startTestApp(store, {
      OPENAI_BASE_URL: fake.baseUrl,
      OPENAI_API_KEY: SERVER_KEY,
      LLM_DEFAULT_MODEL: 'gpt-test',
    });
  });
  afterAll(async () => {
    await t?.dispose();
    await fake?.close();
    await listener?.close();
  });

  const ask = (project: string, agent: string) =>
    t.http
      .post(`/api/projects/${project}/agents/${agent}/completions`)
      .send({ messages: [{ question: 'hi' }] });

  it("an agent on the server's default reaches it with the server's key", async () => {
    const { name: project } = await givenProject(t);
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({ agent: { name: 'plain', model: { provider: 'openai', model_name: 'gpt-test' } } })
      .expect(201);
    fake.enqueue(fakeReply.text('hello'));
    await ask(project, 'plain').expect(200);
    expect(fake.requests().at(-1)!.headers.authorization).toBe(`Bearer ${SERVER_KEY}`);
  });

  it("an agent naming only its own base_url gets no key: the server's never reaches it", async () => {
    const { name: project } = await givenProject(t);
    const before = listener.requests().length;
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({ agent: { name: 'probe', model: { model_name: 'gpt-test', base_url: listener.url('/v1') } } })
      .expect(201);
    const res = await ask(project, 'probe');
    expect(res.status).toBeGreaterThanOrEqual(400);
    const got = listener.requests().slice(before);
    expect(got.length).toBeGreaterThan(0);
    for (const r of got) expect(r.headers.authorization).not.toBe(`Bearer ${SERVER_KEY}`);
    expect(listener.seen()).not.toContain(SERVER_KEY);
  });

  it("an ML engine's key goes to the engine's URL only, never to an agent's own base_url", async () => {
    const engine = uniqueName('llm');
    const engineKey = `sk-engine-${uniqueName('k')}`;
    const created = await querySql(
      t,
      `CREATE ML_ENGINE ${engine} FROM openai USING api_key = '${engineKey}', base_url = '${fake.baseUrl}'`,
    );
    expect(created.type).toBe('ok');
    const { name: project } = await givenProject(t);
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({ agent: { name: 'legit', model_name: 'gpt-e', provider: engine } })
      .expect(201);
    fake.enqueue(fakeReply.text('engine says hi'));
    await ask(project, 'legit').expect(200);
    expect(fake.requests().at(-1)!.headers.authorization).toBe(`Bearer ${engineKey}`);

    const before = listener.requests().length;
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: 'thief',
          model_name: 'gpt-e',
          provider: engine,
          params: { base_url: listener.url('/v1') },
        },
      })
      .expect(201);
    const res = await ask(project, 'thief');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(listener.requests().length).toBeGreaterThan(before);
    expect(listener.seen()).not.toContain(engineKey);
    expect(listener.seen()).not.toContain(SERVER_KEY);
  });

  it("a knowledge base's embedding base_url gets no server key", async () => {
    const { name: project } = await givenProject(t);
    const kb = uniqueName('kb');
    const before = listener.requests().length;
    await t.http
      .post(`/api/projects/${project}/knowledge_bases`)
      .send({
        knowledge_base: {
          name: kb,
          embedding_model: { provider: 'openai', model_name: 'e', base_url: listener.url('/v1') },
        },
      })
      .expect(201);
    const res = await t.http
      .put(`/api/projects/${project}/knowledge_bases/${kb}`)
      .send({ knowledge_base: { rows: [{ id: 'a', content: 'some text' }] } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(listener.requests().length).toBeGreaterThan(before);
    expect(listener.seen()).not.toContain(SERVER_KEY);
  });

  it('a masked password no longer stands for the stored one once the host or port changes: 400 before any connection', async () => {
    const name = uniqueName('corpdb');
    const password = `pw-${uniqueName('secret')}`;
    await t.http
      .post('/api/databases')
      .send({ database: { name, engine: 'postgres', parameters: postgresParameters({ password }) } })
      .expect(201);
    const impostor = await startPgImpostor();
    try {
      const res = await t.http
        .put(`/api/databases/${name}`)
        .send({
          database: {
            parameters: postgresParameters({ host: '127.0.0.1', port: impostor.port, password: '******' }),
          },
        })
        .expect(400);
      expect(problemOf(res).detail).toMatch(/password must be sent again/);
      expect(impostor.connections()).toBe(0);
      // Without a password: nothing stored goes along (the impostor gets an empty one at most).
      const { password: _dropped, ...withoutPassword } = postgresParameters({ port: impostor.port });
      await t.http
        .put(`/api/databases/${name}`)
        .send({ database: { parameters: withoutPassword } })
        .expect(400);
      expect(impostor.raw()).not.toContain(password);
    } finally {
      await impostor.close();
    }
    await t.http
      .put(`/api/databases/${name}`)
      .send({ database: { parameters: postgresParameters({ password: '******', database: 'postgres' }) } })
      .expect(200);
  });

  it("an agent's stored key must be sent again when its base_url changes", async () => {
    const { name: project } = await givenProject(t);
    const key = `sk-agent-${uniqueName('k')}`;
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: { name: 'mover', model: { model_name: 'gpt-test', api_key: key, base_url: fake.baseUrl } },
      })
      .expect(201);
    const res = await t.http
      .put(`/api/projects/${project}/agents/mover`)
      .send({
        agent: { model: { model_name: 'gpt-test', api_key: '******', base_url: listener.url('/v1') } },
      })
      .expect(400);
    expect(problemOf(res).detail).toMatch(/model\.api_key must be sent again/);
    await t.http
      .put(`/api/projects/${project}/agents/mover`)
      .send({ agent: { model: { model_name: 'gpt-test', api_key: '******', base_url: fake.baseUrl } } })
      .expect(200);
  });
});

describe('with OUTBOUND_ALLOW not admitting 127.0.0.1', () => {
  let t: TestApp;
  let listener: Listener;
  let allowed: Listener;
  beforeAll(async () => {
    listener = await startListener();
    // An allowed host (127.0.0.2) that serves a file, and redirects to the refused one.
    allowed = await startListener('127.0.0.2', (req, res) => {
      if (req.url === '/ok.csv') res.end('a,b\n1,2\n');
      else if (req.url === '/hop.csv') res.writeHead(302, { location: listener.url('/x.csv') }).end();
      else if (req.url === '/hop-numeric.csv')
        res.writeHead(307, { location: `http://2130706433:${listener.port}/x.csv` }).end();
      else return false;
      return true;
    });
    // Sign-in is off here: local-first (which would admit loopback) is turned off to test the list.
    t = await startTestApp('sqlite', {
      FILE_URL_UPLOAD: 'true',
      OUTBOUND_ALLOW: '127.0.0.2',
      OUTBOUND_LOCAL_FIRST: 'false',
    });
  });
  afterAll(async () => {
    await t?.dispose();
    await listener?.close();
    await allowed?.close();
  });

  const upload = (source: string) =>
    t.http.put(`/api/files/${uniqueName('f')}`).send({ source_type: 'url', source });

  it('loads a file from an allowed host', async () => {
    const ok = await upload(allowed.url('/ok.csv')).expect(200);
    expect(ok.body).toMatchObject({ row_count: 1 });
  });

  it.each([
    (port: number) => `http://127.0.0.1:${port}/x.csv`,
    (port: number) => `http://127.1:${port}/`,
    (port: number) => `http://2130706433:${port}/`,
    (port: number) => `http://0x7f.1:${port}/`,
    (port: number) => `http://0.0.0.0:${port}/`,
    (port: number) => `http://localhost:${port}/`,
    (port: number) => `http://[::ffff:127.0.0.1]:${port}/`,
  ])('refuses a file URL to loopback (%#), and the listener sees nothing', async (form) => {
    const res = await upload(form(listener.port)).expect(403);
    expect(problemOf(res).detail).toMatch(/OUTBOUND_ALLOW/);
    expect(listener.connections()).toBe(0);
  });

  it('refuses a redirect from an allowed host to loopback, each hop checked', async () => {
    const hops = allowed.requests().length;
    expect(problemOf(await upload(allowed.url('/hop.csv')).expect(403)).detail).toMatch(/127\.0\.0\.1/);
    expect(problemOf(await upload(allowed.url('/hop-numeric.csv')).expect(403)).detail).toMatch(
      /OUTBOUND_ALLOW/,
    );
    expect(allowed.requests().length).toBe(hops + 2);
    expect(listener.connections()).toBe(0);
  });

  it('refuses a webhook chat channel (a chatbot’s database) to loopback', async () => {
    const res = await t.http
      .post('/api/databases')
      .send({
        database: { name: uniqueName('hook'), engine: 'webhook', parameters: { url: listener.url('/hook') } },
      })
      .expect(403);
    expect(problemOf(res).detail).toMatch(/OUTBOUND_ALLOW/);
    expect(listener.connections()).toBe(0);
  });

  it('refuses a database host on loopback before connecting, in REST and SQL', async () => {
    const res = await t.http
      .post('/api/databases')
      .send({
        database: {
          name: uniqueName('db'),
          engine: 'postgres',
          parameters: postgresParameters({ host: '2130706433', port: listener.port }),
        },
      })
      .expect(403);
    expect(problemOf(res).detail).toMatch(/OUTBOUND_ALLOW/);
    const sql = await querySql(
      t,
      `CREATE DATABASE ${uniqueName('db')} WITH ENGINE = 'postgres', PARAMETERS = {"host": "127.1", "port": ${listener.port}, "user": "u", "password": "p", "database": "d"}`,
    );
    expect(sql.type).toBe('error');
    expect(sql.error_message).toMatch(/OUTBOUND_ALLOW/);
    expect(listener.connections()).toBe(0);
  });

  it("refuses an agent's base_url on loopback: 403, nothing sent", async () => {
    const { name: project } = await givenProject(t);
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: 'local',
          model: { model_name: 'm', api_key: 'sk-own', base_url: listener.url('/v1') },
        },
      })
      .expect(201);
    const res = await t.http
      .post(`/api/projects/${project}/agents/local/completions`)
      .send({ messages: [{ question: 'hi' }] })
      .expect(403);
    expect(problemOf(res).detail).toMatch(/OUTBOUND_ALLOW/);
    expect(listener.connections()).toBe(0);
  });
});
