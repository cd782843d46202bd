/**
 * Issue 60 item 5, the switches: `read_only`, `project` and `features` on the MCP URL (`/mcp/`,
 * `/mcp/streamable`, `/mcp/sse`), with the official SDK's clients on both stores. Each narrows the
 * signed-in caller for the whole session (its tools, its SQL, its agents, what the record says),
 * never widens it; a bad switch is a 400 problem+json naming it, a widening one a 403.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpCallRecorded } from '../../events';
import { storeKinds, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import {
  ADMIN,
  givenHelperAgent,
  login,
  sqlOver,
  startAuthApp,
  startRoleWorld,
  tokensByRole,
  type Who,
} from '../auth/support';
import {
  ALL_TOOLS,
  bearer,
  call,
  eventAt,
  listen,
  receiptOf,
  rowsOf,
  textOf,
  type Listening,
} from './support';

type Recorded = McpCallRecorded['data'];

type Kind = 'streamable' | 'sse';

/**
 * A world's start (an app, its users and tokens, two projects): a bound for a hang, not a measure of
 * speed (at load 22 the PostgreSQL world took past jest's 30 s and every test of its describe failed).
 */
const SETUP_TIMEOUT_MS = 180_000;

describe.each(storeKinds)('MCP URL switches (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let fake: FakeOpenAi;
  let tokens: Record<Who, string>;
  const open: Client[] = [];
  let skills = 0;

  /** A client of `kind` connected to the URL with `query`, signed in with `token`. */
  const connect = async (kind: Kind, query: string, token: string) => {
    const client = new Client({ name: `spec-switches-${kind}`, version: '1.0.0' });
    const headers = bearer(token);
    await client.connect(
      kind === 'sse'
        ? new SSEClientTransport(new URL(`${l.url}/mcp/sse?${query}`), { requestInit: { headers } })
        : new StreamableHTTPClientTransport(new URL(`${l.url}/mcp/?${query}`), { requestInit: { headers } }),
    );
    open.push(client);
    return client;
  };

  /** The call's record, read from the log; and what the call appended besides it (nothing, for a refusal). */
  const recordOf = async (result: { _meta?: Record<string, unknown> }) => {
    const receipt = receiptOf(result);
    const event = await eventAt(t, receipt.position);
    expect(event?.type).toBe('McpCallRecorded');
    return event!.data as Recorded;
  };

  /** An initialize POSTed by hand to `path` (a problem answer is what these specs read). */
  const initialize = (path: string, token: string, method = 'POST') =>
    fetch(`${l.url}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...bearer(token),
      },
      ...(method === 'POST'
        ? {
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: {
                protocolVersion: '2025-11-25',
                capabilities: {},
                clientInfo: { name: 'by-hand', version: '1' },
              },
            }),
          }
        : {}),
    });

  const problem = async (res: Response) => {
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as { title: string; detail: string; status: number };
    expect(body.status).toBe(res.status);
    return body;
  };

  const writeSkill = () =>
    `CREATE SKILL pa.switch_skill_${++skills} USING type = 'text2sql', database = 'files'`;

  beforeAll(async () => {
    let admin: string;
    ({ t, fake, admin, tokens } = await startRoleWorld(store, 'sw'));
    l = await listen(t);
    for (const p of ['pa', 'pb']) {
      expect(await sqlOver(t, admin, `CREATE PROJECT ${p}`)).toMatchObject({ type: 'ok' });
      expect(
        await sqlOver(t, admin, `CREATE SKILL ${p}.${p}_skill USING type = 'text2sql', database = 'files'`),
      ).toMatchObject({ type: 'ok' });
      await givenHelperAgent(t, admin, p, fake);
    }
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await fake?.close();
    await l?.close();
    await t?.dispose();
  });

  describe.each(['streamable', 'sse'] as const)('over %s', (kind) => {
    it("read_only=true: query is offered read-only, an admin's write is refused (1227) and appends only its record, reads run, the record says analyst", async () => {
      const client = await connect(kind, 'read_only=true', tokens.admin);
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(ALL_TOOLS);
      const query = tools.find((x) => x.name === 'query')!;
      expect(query.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(query.description).toMatch(/read-only \(read_only=true/);
      expect(client.getInstructions()).toMatch(/This connection's URL narrows it: it is read-only/);

      const before = (await t.running.ctx.log.head()).position;
      const write = await call(client, 'query', { query: writeSkill() });
      expect(write.isError).toBe(true);
      expect(write.structuredContent).toMatchObject({ type: 'error', error_code: 1227 });
      expect(textOf(write)).toMatch(/analyst role is read-only/);
      const receipt = receiptOf(write);
      const appended = await t.running.ctx.log.readPage({ after: before, limit: 100 });
      expect(appended.map((e) => [e.type, e.meta.stream])).toEqual([['McpCallRecorded', receipt.stream]]);
      expect(await recordOf(write)).toMatchObject({
        outcome: 'refused',
        caller: { actor: expect.stringMatching(/^token:/), user: ADMIN.name, role: 'analyst', scope: null },
      });

      const read = await call(client, 'query', { query: 'SELECT NAME FROM pb.skills' });
      expect(rowsOf(read)).toEqual([{ NAME: 'pb_skill' }]);
      // The session keeps the switch: a later call in it is as read-only as the first.
      expect((await call(client, 'query', { query: writeSkill() })).structuredContent).toMatchObject({
        error_code: 1227,
      });
    });

    it('project=pa: an unscoped token sees pa as a token scoped to it would; pb is refused, the record says scope pa', async () => {
      const client = await connect(kind, 'project=PA', tokens.editor);
      const databases = rowsOf(await call(client, 'list_databases')).map((r) => r.Database);
      expect(databases).toContain('pa');
      expect(databases).not.toContain('pb');
      expect(databases).not.toContain('mindsdb');

      const mine = await call(client, 'query', { query: 'SELECT NAME FROM skills' });
      expect(rowsOf(mine)).toEqual([{ NAME: 'pa_skill' }]);
      expect(await recordOf(mine)).toMatchObject({
        project: 'pa',
        outcome: 'ok',
        caller: { user: 'sw_editor', role: 'editor', scope: 'pa' },
      });

      const other = await call(client, 'query', { query: 'SELECT NAME FROM pb.skills' });
      expect(other.structuredContent).toMatchObject({ type: 'error', error_code: 1227 });
      expect(textOf(other)).toMatch(/reaches only project pa, not pb/);
      const agent = await call(client, 'ask_agent', { project: 'pb', agent: 'helper', question: 'hi' });
      expect(agent.isError).toBe(true);
      expect(textOf(agent)).toMatch(/reaches only project pa/);
      expect((await recordOf(agent)).outcome).toBe('refused');
      // As a scoped token: SQL reads only (writes go through REST under the project).
      expect((await call(client, 'query', { query: writeSkill() })).structuredContent).toMatchObject({
        error_code: 1227,
      });
    });

    it("features=catalog,sql: only those groups' tools are listed; another's call is refused, recorded, naming the switch", async () => {
      const client = await connect(kind, 'features=catalog,SQL', tokens.admin);
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual([
        'describe_table',
        'list_databases',
        'list_tables',
        'query',
      ]);
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['write_sql']);
      const asked = await call(client, 'ask_agent', { project: 'pa', agent: 'helper', question: 'hi' });
      expect(asked.isError).toBe(true);
      expect(asked.structuredContent).toBeUndefined();
      expect(textOf(asked)).toBe(
        'ask_agent is not offered on this connection: its URL asks for features=catalog,sql, and ask_agent is in agents',
      );
      expect(await recordOf(asked)).toMatchObject({ target: 'ask_agent', outcome: 'refused', traceId: null });
      const verify = await call(client, 'verify_call', { position: 1 });
      expect(verify.isError).toBe(true);
      expect((await recordOf(verify)).outcome).toBe('refused');
      expect(rowsOf(await call(client, 'query', { query: 'SELECT 1 AS one' }))).toEqual([{ one: 1 }]);
    });

    it('features=agents: no schema resources and no SQL prompt on the connection either', async () => {
      const client = await connect(kind, 'features=agents', tokens.admin);
      expect((await client.listTools()).tools.map((x) => x.name)).toEqual(['ask_agent']);
      expect((await client.listResources()).resources).toEqual([]);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
      expect((await client.listPrompts()).prompts).toEqual([]);
      await expect(client.readResource({ uri: 'mindledger://schema/pa/skills' })).rejects.toThrow(
        /catalog group's/,
      );
      const answer = await call(client, 'ask_agent', { project: 'pa', agent: 'helper', question: 'hi' });
      expect(answer.isError).toBe(false);
      expect(answer.structuredContent).toMatchObject({ answer: 'Hello from the agent.' });
    });
  });

  it('all three switches at once, over /mcp/streamable, narrow together', async () => {
    const client = new Client({ name: 'spec-streamable-path', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`${l.url}/mcp/streamable?read_only=true&project=pa&features=sql,agents`),
        { requestInit: { headers: bearer(tokens.admin) } },
      ),
    );
    open.push(client);
    expect((await client.listTools()).tools.map((x) => x.name).sort()).toEqual(['ask_agent', 'query']);
    const read = await call(client, 'query', { query: 'SELECT NAME FROM skills' });
    expect(rowsOf(read)).toEqual([{ NAME: 'pa_skill' }]);
    expect(await recordOf(read)).toMatchObject({
      caller: { user: ADMIN.name, role: 'analyst', scope: 'pa' },
    });
    expect(
      (await call(client, 'query', { query: 'SELECT * FROM pb.skills' })).structuredContent,
    ).toMatchObject({ error_code: 1227 });
  });

  it('/mcp/status says which tools a connection with the switches is offered', async () => {
    const res = await fetch(`${l.url}/mcp/status?features=models,audit&read_only=true`, {
      headers: bearer(tokens.admin),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      tools: 2,
      tool_names: ['predict', 'verify_call'],
      switches: { read_only: true, project: null, features: ['models', 'audit'] },
    });
  });

  it.each([
    [
      '/mcp/?readonly=true',
      400,
      /Unknown switch "readonly" in the MCP URL: it takes read_only, project, features/,
    ],
    ['/mcp/?read_only=yes', 400, /Switch read_only="yes": read_only is true or false/],
    ['/mcp/?read_only=true&read_only=false', 400, /Switch read_only is given more than once/],
    [
      '/mcp/?features=sql,bogus',
      400,
      /features names an unknown group "bogus": the groups are catalog, sql,/,
    ],
    ['/mcp/?features=', 400, /Switch features="": features is empty/],
    ['/mcp/?features=sql,,agents', 400, /features names an empty group/],
    ['/mcp/streamable?project=', 400, /Switch project="": project is empty/],
    ['/mcp/streamable?project=nowhere', 400, /project="nowhere" names no project/],
    ['/mcp/streamable?project=files', 400, /project="files" names database files, which is not a project/],
    ['/mcp/streamable?project=%00', 400, /project holds a control character/],
  ])(
    'refuses %s with a %s problem naming what is wrong, and opens no session',
    async (path, status, detail) => {
      for (const p of [path, path.replace(/^\/mcp\/(streamable)?/, '/mcp/sse')]) {
        const res = await initialize(p, tokens.admin, p.startsWith('/mcp/sse') ? 'GET' : 'POST');
        expect(res.status).toBe(status);
        expect(res.headers.get('mcp-session-id')).toBeNull();
        const body = await problem(res);
        expect(body.title).toBe('Invalid MCP URL switch');
        expect(body.detail).toMatch(detail);
      }
    },
  );

  it('refuses a switch that would widen the token: a token scoped to pa asking project=pb is 403 on every URL', async () => {
    for (const [path, method] of [
      ['/mcp/?project=pb', 'POST'],
      ['/mcp/streamable?project=pb', 'POST'],
      ['/mcp/sse?project=pb', 'GET'],
    ] as const) {
      const res = await initialize(path, tokens['token(pa)'], method);
      expect(res.status).toBe(403);
      expect(await problem(res)).toMatchObject({
        title: 'MCP URL switch widens the token',
        detail: expect.stringMatching(/reaches only project pa: project="pb" would widen it/),
      });
    }
    // Its own project is no widening.
    const client = await connect('streamable', 'project=pa', tokens['token(pa)']);
    expect(rowsOf(await call(client, 'query', { query: 'SELECT NAME FROM skills' }))).toEqual([
      { NAME: 'pa_skill' },
    ]);
  });

  it("keeps a session's switches for its life: a request in it naming other switches is a 400, naming none takes the session's", async () => {
    const opened = await initialize('/mcp/?read_only=true', tokens.admin);
    expect(opened.status).toBe(200);
    const sessionId = opened.headers.get('mcp-session-id')!;
    await opened.body?.cancel();
    const inSession = (query: string) =>
      fetch(`${l.url}/mcp/${query}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
          ...bearer(tokens.admin),
        },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
    const widened = await inSession('?read_only=false');
    expect(widened.status).toBe(400);
    expect((await problem(widened)).detail).toMatch(
      /This session was opened with read_only=true in its URL; a request in it names read_only=false: a session's switches hold for its life/,
    );
    const dropped = await inSession('?features=sql');
    expect(dropped.status).toBe(400);
    expect((await problem(dropped)).detail).toMatch(/a request in it names features=sql/);
    expect((await inSession('')).status).toBe(202);
    expect((await inSession('?read_only=true')).status).toBe(202);
  });
});

/**
 * Role × switch, end to end: for each principal of the role matrix and each switch, what a call may
 * do on the switched connection is at most what it may do on a plain one (never widened).
 */
describe.each(storeKinds)('MCP URL switches never widen a role (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let tokens: Record<Who, string>;
  const open: Client[] = [];
  let n = 0;

  const OPS: { id: string; tool: string; args: () => Record<string, unknown> }[] = [
    { id: 'read pa', tool: 'query', args: () => ({ query: 'SELECT NAME FROM pa.skills' }) },
    { id: 'read pb', tool: 'query', args: () => ({ query: 'SELECT NAME FROM pb.skills' }) },
    {
      id: 'write pa',
      tool: 'query',
      args: () => ({ query: `CREATE SKILL pa.matrix_${++n} USING type = 'text2sql', database = 'files'` }),
    },
    {
      id: 'events',
      tool: 'query',
      args: () => ({ query: 'SELECT count(*) AS c FROM information_schema.EVENTS' }),
    },
    { id: 'tables pb', tool: 'list_tables', args: () => ({ database: 'pb' }) },
  ];
  const SWITCHES = ['', 'read_only=true', 'project=pa', 'features=sql', 'read_only=true&project=pa'];

  /** What each op came to for `who` on a connection with `query`: ok or refused (unopened: all refused). */
  const outcomes = async (who: Who, query: string) => {
    const client = new Client({ name: 'spec-matrix', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${l.url}/mcp/?${query}`), {
          requestInit: { headers: bearer(tokens[who]) },
        }),
      );
    } catch {
      return OPS.map(() => 'refused');
    }
    open.push(client);
    const got: string[] = [];
    for (const op of OPS) {
      const result = await call(client, op.tool, op.args());
      got.push(result.isError ? 'refused' : 'ok');
    }
    return got;
  };

  beforeAll(async () => {
    t = await startAuthApp(store);
    l = await listen(t);
    const admin = await login(t, ADMIN.name, ADMIN.password);
    tokens = await tokensByRole(t, admin, 'mx');
    for (const p of ['pa', 'pb']) {
      expect(await sqlOver(t, admin, `CREATE PROJECT ${p}`)).toMatchObject({ type: 'ok' });
      expect(
        await sqlOver(t, admin, `CREATE SKILL ${p}.${p}_skill USING type = 'text2sql', database = 'files'`),
      ).toMatchObject({ type: 'ok' });
    }
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await l?.close();
    await t?.dispose();
  });

  it.each(['admin', 'editor', 'analyst', 'auditor', 'token(pa)'] as const)(
    '%s: no switch lets a call through that the plain connection refuses',
    async (who) => {
      const plain = await outcomes(who, '');
      const widened: string[] = [];
      const table: string[] = [];
      for (const query of SWITCHES.slice(1)) {
        const switched = await outcomes(who, query);
        table.push(`${query}: ${switched.join(' ')}`);
        switched.forEach((o, i) => {
          if (o === 'ok' && plain[i] !== 'ok') widened.push(`${query} widened ${OPS[i]!.id}`);
        });
      }
      expect(widened).toEqual([]);
      // And each switch does narrow where it says it does.
      const row = (q: string) => table.find((line) => line.startsWith(`${q}:`))!;
      if (plain[2] === 'ok') expect(row('read_only=true')).toMatch(/^read_only=true: \S+ \S+ refused/);
      if (plain[1] === 'ok') expect(row('project=pa')).toMatch(/^project=pa: \S+ refused/);
      expect(row('features=sql')).toMatch(/refused$/);
    },
  );
});
