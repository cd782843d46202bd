/**
 * Issue 57, defect 7 and local-first.
 *
 * - IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-translated
 *   ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by the address they carry.
 * - DNS rebinding: an HTTP call (LLM, embeddings, webhooks: all through the policy's fetch) connects
 *   to the address its check admitted. A resolver answers a public address first and 127.0.0.1 after;
 *   a listener on 127.0.0.1 records what arrives: nothing may.
 * - Local-first: while sign-in is off, loopback and private destinations are reached; once an admin
 *   exists (the policy follows it live), only public ones and OUTBOUND_ALLOW.
 */
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import { webhookChannel } from '../../src/channels/webhook';
import { isPublicAddress, outboundPolicy } from '../../src/http/outbound';
import { createLlmClient } from '../../src/engines/llm/openaiClient';
import { postgresParameters } from '../support/external';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { uniqueName } from '../support/world';

/** A listener on 127.0.0.1 counting connections and requests; answers like an OpenAI API would. */
const startListener = async () => {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hi' } }],
          data: [{ index: 0, embedding: [1, 0] }],
        }),
      );
    });
  });
  server.on('connection', (s: net.Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen: () => ({ connections, requests }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
};
type Listener = Awaited<ReturnType<typeof startListener>>;

/**
 * A resolver for one name that answers a public address to its first lookup and 127.0.0.1 to every
 * later one (DNS rebinding); other names resolve as usual.
 */
const rebindingName = (name: string) => {
  const real = dns.lookup.bind(dns);
  let lookups = 0;
  const spy = jest.spyOn(dns, 'lookup').mockImplementation(((
    host: string,
    options: unknown,
    callback?: unknown,
  ) => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    if (host !== name) return (real as (...args: unknown[]) => void)(host, options, callback);
    lookups++;
    const address = lookups === 1 ? '93.184.215.14' : '127.0.0.1';
    const all = typeof options === 'object' && options !== null && (options as dns.LookupOptions).all;
    process.nextTick(() => (all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
  }) as unknown as typeof dns.lookup);
  return { lookups: () => lookups, restore: () => spy.mockRestore() };
};

describe('IPv6 forms carrying an IPv4 address are judged by it', () => {
  const notPublic = [
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    // IPv4-translated (::ffff:0:0:0/96).
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:0:a9fe:a9fe',
    // NAT64: the IPv4 address in the last 32 bits.
    '64:ff9b::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b::a9fe:a9fe',
    // NAT64's local-use prefix.
    '64:ff9b:1::808:808',
    // 6to4: the IPv4 address in bits 16 to 48.
    '2002:7f00:1::',
    '2002:7f00:1::1',
    '2002:a00:1::1',
    '2002:c0a8:101::1',
    '2002:a9fe:a9fe::1',
  ];
  it.each(notPublic)(
    '%s is not public, and a strict policy refuses it before connecting',
    async (address) => {
      expect(isPublicAddress(address)).toBe(false);
      await expect(
        outboundPolicy('', { localFirst: false }).checkHost(`[${address}]`, 'Test'),
      ).rejects.toMatchObject({
        kind: 'Forbidden',
        detail: expect.stringContaining('OUTBOUND_ALLOW'),
      });
    },
  );

  it('admits the NAT64 and 6to4 forms of a public IPv4 address', () => {
    for (const address of ['64:ff9b::808:808', '64:ff9b::8.8.8.8', '2002:808:808::1'])
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
  });
});

describe('DNS rebinding: every HTTP call connects to the address its check admitted', () => {
  let listener: Listener;
  let resolver: ReturnType<typeof rebindingName> | undefined;
  beforeEach(async () => {
    listener = await startListener();
  });
  afterEach(async () => {
    resolver?.restore();
    resolver = undefined;
    await listener.close();
  });
  // The policy as the app has it with sign-in on: public addresses only.
  const strict = () => outboundPolicy('', { localFirst: false });
  const rebinding = () => {
    const name = `${uniqueName('rebind')}.example`.toLowerCase();
    resolver = rebindingName(name);
    return `http://${name}:${listener.port}`;
  };

  it("the policy's fetch: refused at the connection, nothing reaches the listener", async () => {
    const base = rebinding();
    await expect(
      strict().fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' }),
    ).rejects.toMatchObject({ kind: 'Forbidden', detail: expect.stringContaining('127.0.0.1') });
    expect(resolver!.lookups()).toBe(2);
    expect(listener.seen()).toEqual({ connections: 0, requests: 0 });
  });

  it('an LLM chat and an embedding call (the OpenAI client over the policy): nothing reaches the listener', async () => {
    const policy = strict();
    const base = rebinding();
    const client = createLlmClient(
      { provider: 'openai', model: 'm', baseUrl: `${base}/v1`, apiKey: 'sk-test', fetch: policy.fetch },
      { requestTimeoutMs: 5_000 },
    );
    await expect(
      client.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeDefined();
    await expect(client.embed({ model: 'e', input: ['text'] })).rejects.toBeDefined();
    expect(resolver!.lookups()).toBeGreaterThanOrEqual(2);
    expect(listener.seen()).toEqual({ connections: 0, requests: 0 });
  });

  it('a webhook delivery (the channel over the policy): nothing reaches the listener', async () => {
    const base = rebinding();
    const channel = webhookChannel(
      { url: `${base}/hook`, secret: '' },
      { fetch: strict().fetch, timeoutMs: 5_000 },
    );
    const delivered = await channel
      .deliver({ chatId: 'c', text: 'hello', answerId: 'a1', inReplyTo: null })
      .catch((error: unknown) => error);
    expect(delivered).toBeDefined();
    expect(resolver!.lookups()).toBeGreaterThanOrEqual(2);
    expect(listener.seen()).toEqual({ connections: 0, requests: 0 });
  });

  it('a name that stays public is reached at the address checked (the pinned fetch answers as fetch does)', async () => {
    // 127.0.0.1 admitted by OUTBOUND_ALLOW: the answer comes back whole, streamed, with its headers.
    const res = await outboundPolicy('127.0.0.1', { localFirst: false }).fetch(
      `http://localhost:${listener.port}/v1/embeddings`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'x' }),
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toMatchObject({ data: [{ embedding: [1, 0] }] });
    expect(listener.seen().requests).toBe(1);
  });
});

describe('local-first: with sign-in off, loopback and private destinations are reached', () => {
  it('follows the sign-in state it is given, at each check', async () => {
    const policy = outboundPolicy('');
    // Until it is told, sign-in counts as on.
    await expect(policy.checkHost('127.0.0.1', 'Test')).rejects.toMatchObject({ kind: 'Forbidden' });
    let signedIn = false;
    policy.followSignIn(() => signedIn);
    await expect(policy.checkHost('127.0.0.1', 'Test')).resolves.toBeDefined();
    await expect(policy.checkHost('192.168.1.10', 'Test')).resolves.toBeDefined();
    await expect(policy.checkHost('[::1]', 'Test')).resolves.toBeDefined();
    // Link-local (a cloud's metadata service) and reserved blocks stay refused.
    await expect(policy.checkHost('169.254.169.254', 'Test')).rejects.toMatchObject({ kind: 'Forbidden' });
    await expect(policy.checkHost('0.0.0.0', 'Test')).rejects.toMatchObject({ kind: 'Forbidden' });
    signedIn = true;
    await expect(policy.checkHost('127.0.0.1', 'Test')).rejects.toMatchObject({ kind: 'Forbidden' });
    expect(policy.localFirstNotice).toMatch(/OUTBOUND_LOCAL_FIRST=false/);

    const off = outboundPolicy('', { localFirst: false });
    off.followSignIn(() => false);
    await expect(off.checkHost('127.0.0.1', 'Test')).rejects.toMatchObject({ kind: 'Forbidden' });
  });
});

describe.each(storeKinds)('local-first, a PostgreSQL on 127.0.0.1, on %s', (store) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });
  const createDatabase = (app: TestApp, cookie?: string) => {
    const request = app.http.post('/api/sql/query').send({
      query: `CREATE DATABASE ${uniqueName('localpg')} WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(postgresParameters())}`,
    });
    return cookie ? request.set('Cookie', cookie) : request;
  };
  const signInOn = async (app: TestApp) => {
    const admin = { name: uniqueName('admin'), password: 'a long passphrase' };
    await app.http
      .post('/api/users')
      .send({ ...admin, role: 'admin' })
      .expect(201);
    const login = await app.http
      .post('/api/login')
      .send({ username: admin.name, password: admin.password })
      .expect(200);
    return ([] as string[]).concat(login.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
  };

  it('sign-in off: CREATE DATABASE reaches it with no setting; once an admin is made, refused (1227) until OUTBOUND_ALLOW lists it', async () => {
    t = await startTestApp(store, { OUTBOUND_ALLOW: '' });
    expect((await createDatabase(t)).body).toMatchObject({ type: 'ok' });

    // The first admin turns sign-in on while the service runs: the policy follows at once.
    const cookie = await signInOn(t);
    const refused = (await createDatabase(t, cookie)).body as {
      type: string;
      error_code: number;
      error_message: string;
    };
    expect(refused).toMatchObject({ type: 'error', error_code: 1227 });
    expect(refused.error_message).toMatch(/OUTBOUND_ALLOW/);
    // REST alike: 403 naming the setting.
    const rest = await t.http
      .post('/api/databases')
      .set('Cookie', cookie)
      .send({
        database: { name: uniqueName('localpg'), engine: 'postgres', parameters: postgresParameters() },
      })
      .expect(403);
    expect(problemOf(rest).detail).toMatch(/OUTBOUND_ALLOW/);
  });

  it('sign-in on with OUTBOUND_ALLOW=127.0.0.1: reached; sign-in off with OUTBOUND_LOCAL_FIRST=false: refused', async () => {
    t = await startTestApp(store, { OUTBOUND_ALLOW: '127.0.0.1' });
    const cookie = await signInOn(t);
    expect((await createDatabase(t, cookie)).body).toMatchObject({ type: 'ok' });
    await t.dispose();

    t = await startTestApp(store, { OUTBOUND_ALLOW: '', OUTBOUND_LOCAL_FIRST: 'false' });
    expect((await createDatabase(t)).body).toMatchObject({ type: 'error', error_code: 1227 });
  });
});
