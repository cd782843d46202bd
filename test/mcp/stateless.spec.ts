/**
 * MCP's two protocol eras on one handler (docs/mcp.md, "Two protocol eras"). A stateless client
 * (revision 2026-07-28, the official SDK v2 client: no `initialize`, no session id, its version,
 * client and capabilities on each request) is answered by any node of a scaled-out deployment: two
 * apps on one PostgreSQL log, each request sent to the other node than the last, with no sticky
 * routing. The 2025-11-25 session client (SDK 1.32.2) still works on the same URL. Roles and the
 * URL switches narrow a stateless call as they narrow a session's, and each call is recorded
 * in the log, with no session to name it by.
 */
import { Client as SessionClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SessionTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startPostgresCluster, storeKinds, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { until } from '../support/until';
import { ADMIN, login, sqlOver, startRoleWorld, tokensByRole, type Who } from '../auth/support';
import { TOOL_GROUPS } from '../../src/mcp/switches';
import { ALL_TOOLS, bearer, call, eventAt, listen, receiptOf, rowsOf, type Listening } from './support';
import { callStateless, STATELESS_REVISION, statelessClient, type StatelessClient } from './statelessClient';

const STATELESS_SESSION_ID = /^stateless-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The record a call's receipt names, read from the log. */
const recordOf = async (t: TestApp, result: { _meta?: Record<string, unknown> }) => {
  const receipt = receiptOf(result);
  const event = await eventAt(t, receipt.position);
  if (event.type !== 'McpCallRecorded') throw new Error(`no MCP call at ${receipt.position}: ${event.type}`);
  expect(event.meta.stream).toBe(receipt.stream);
  return event;
};

/** The records of calls to `target` appended after `after` (a call refused before any answer carries no receipt). */
const recordsOf = (t: TestApp, after: bigint, target: string) =>
  until(`the record of a call to ${target}`, async () => {
    const events = await t.running.ctx.log.readPage({ after, limit: 500 });
    const records = events.flatMap((e) =>
      e.type === 'McpCallRecorded' && e.data.target === target ? [e] : [],
    );
    return records.length > 0 ? records : undefined;
  });

/** A 2025-era session client (SDK 1.32.2) on `url` (a path and switches included). */
const sessionClient = async (url: string, headers: Record<string, string>) => {
  const client = new SessionClient({ name: 'session-spec-client', version: '1.32.2' }, { capabilities: {} });
  await client.connect(new SessionTransport(new URL(url), { requestInit: { headers } }));
  return client;
};

/** What a tool list says of each tool, whichever SDK listed it. */
const described = (tools: readonly { name: string; description?: string; annotations?: unknown }[]) =>
  tools
    .map((t) => ({ name: t.name, description: t.description, annotations: t.annotations }))
    .sort((a, b) => a.name.localeCompare(b.name));

describe('MCP stateless era (2026-07-28) on two nodes over one PostgreSQL log', () => {
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;
  let nodeA: TestApp;
  let a: Listening;
  let b: Listening;
  let tokens: Record<Who, string>;
  const opened: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster(2, {
      env: { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password },
    });
    nodeA = cluster.apps[0]!;
    a = await listen(nodeA);
    b = await listen(cluster.apps[1]!);
    tokens = await tokensByRole(nodeA, await login(nodeA, ADMIN.name, ADMIN.password), 'two_nodes');
  }, 120_000);
  afterAll(async () => {
    for (const c of opened) await c.close().catch(() => undefined);
    await a?.close();
    await b?.close();
    await cluster?.dispose();
  });

  const stateless = async (options: Parameters<typeof statelessClient>[1]) => {
    const c = await statelessClient([a.url, b.url], options);
    opened.push(c.client);
    return c;
  };

  it('given a stateless client behind a balancer with no sticky routing, when it discovers, lists and calls, alternating A and B, then a write through A is read through B and every call is recorded', async () => {
    const before = (await nodeA.running.ctx.log.head()).position;
    const c: StatelessClient = await stateless({
      headers: bearer(tokens.admin),
      info: { name: 'spec-stateless', version: '2.4.0' },
    });
    // server/discover (node A): no initialize, no session.
    expect(c.client.getProtocolEra()).toBe('modern');
    expect(c.client.getDiscoverResult()).toMatchObject({
      supportedVersions: [STATELESS_REVISION],
      capabilities: { tools: {}, resources: {}, prompts: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mindledger' } },
    });
    expect(c.client.getInstructions()).toMatch(/Every call is recorded/);

    const { tools } = await c.client.listTools(); // node B
    expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);

    const project = `stateless_${Date.now().toString(36)}`;
    const write = await callStateless(c, 'query', { query: `CREATE PROJECT ${project}` }); // node A
    expect(write.isError).toBeFalsy();
    expect(write.structuredContent).toMatchObject({ type: 'ok' });

    const read = await callStateless(c, 'list_databases'); // node B
    expect(rowsOf(read)).toContainEqual(expect.objectContaining({ Database: project, TYPE: 'project' }));

    const bad = await callStateless(c, 'query', { query: 'SELEC nothing FROM nowhere' }); // node A
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ type: 'error', error_message: expect.any(String) });

    await expect(c.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Unknown tool "no_such_tool"/),
    }); // node B

    expect(c.served.map(({ node, method }) => [node, method])).toEqual([
      [a.url, 'server/discover'],
      [b.url, 'tools/list'],
      [a.url, 'tools/call'],
      [b.url, 'tools/call'],
      [a.url, 'tools/call'],
      [b.url, 'tools/call'],
    ]);

    // Each call is recorded on a stream of its own, named by no session: the caller, the client and
    // the protocol version the request's envelope carried.
    const records = [
      await recordOf(nodeA, write),
      await recordOf(nodeA, read),
      await recordOf(nodeA, bad),
      ...(await recordsOf(nodeA, before, 'no_such_tool')),
    ];
    const expected = {
      seq: 1,
      method: 'tools/call',
      protocolVersion: STATELESS_REVISION,
      client: { name: 'spec-stateless', version: '2.4.0' },
      caller: { actor: expect.stringMatching(/^token:/), user: ADMIN.name, role: 'admin', scope: null },
    };
    expect(records.map((r) => r.data)).toEqual([
      expect.objectContaining({
        ...expected,
        target: 'query',
        sql: `CREATE PROJECT ${project}`,
        outcome: 'ok',
        project: 'mindsdb',
      }),
      expect.objectContaining({ ...expected, target: 'list_databases', outcome: 'ok' }),
      expect.objectContaining({ ...expected, target: 'query', outcome: 'error' }),
      expect.objectContaining({ ...expected, target: 'no_such_tool', outcome: 'invalid' }),
    ]);
    for (const r of records) {
      expect(r.data.sessionId).toMatch(STATELESS_SESSION_ID);
      expect(r.meta.stream).toBe(`mcp-session-${r.data.sessionId}`);
    }
    expect(new Set(records.map((r) => r.data.sessionId)).size).toBe(records.length);
    // The write's own event is in the log, before its record.
    const appended = await nodeA.running.ctx.log.readPage({ after: before, limit: 500 });
    const created = appended.find(
      (e) => e.type === 'ProjectCreated' && JSON.stringify(e.data).includes(project),
    );
    expect(created?.meta.position).toBeLessThan(receiptOf(write).position);
  });

  it('given the same URL, when a 2025-11-25 session client connects to either node, then it works as before, its session held by the node that opened it', async () => {
    const viaA = await sessionClient(`${a.url}/mcp/`, bearer(tokens.admin));
    opened.push(viaA);
    const viaB = await sessionClient(`${b.url}/mcp/`, bearer(tokens.admin));
    opened.push(viaB);
    expect(viaB.getServerVersion()).toMatchObject({ name: 'mindledger' });
    const listed = await call(viaB, 'list_databases');
    expect(rowsOf(listed)).toContainEqual(expect.objectContaining({ Database: 'mindsdb' }));
    const record = await recordOf(nodeA, listed);
    expect(record.data).toMatchObject({
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      protocolVersion: '2025-11-25',
      client: { name: 'session-spec-client', version: '1.32.2' },
      caller: { user: ADMIN.name, role: 'admin' },
      outcome: 'ok',
    });
    // The same tools, described alike, in both eras.
    const c = await stateless({ headers: bearer(tokens.admin) });
    expect(described((await c.client.listTools()).tools)).toEqual(described((await viaA.listTools()).tools));

    // A session lives in the memory of the node that opened it: the other node does not know it.
    const sessionOfA = receiptOf(await call(viaA, 'list_databases')).stream.replace('mcp-session-', '');
    const elsewhere = await fetch(`${b.url}/mcp/`, {
      method: 'POST',
      headers: {
        ...bearer(tokens.admin),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionOfA,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
    });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({
      error: { message: 'Session not found: initialize a new one' },
    });
  });
});

describe.each(storeKinds)('MCP stateless calls narrowed as session calls are (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let fake: FakeOpenAi;
  let tokens: Record<Who, string>;
  const opened: { close(): Promise<void> }[] = [];
  let n = 0;
  const writeSkill = () =>
    `CREATE SKILL pa.stateless_skill_${++n} USING type = 'text2sql', database = 'files'`;

  beforeAll(async () => {
    let admin: string;
    ({ t, fake, admin, tokens } = await startRoleWorld(store, 'stl'));
    expect(await sqlOver(t, admin, 'CREATE PROJECT pa')).toMatchObject({ type: 'ok' });
    l = await listen(t);
  }, 60_000);
  afterAll(async () => {
    for (const c of opened) await c.close().catch(() => undefined);
    await fake?.close();
    await l?.close();
    await t?.dispose();
  });

  const both = async (token: string, switches = '') => {
    const path = `/mcp/${switches === '' ? '' : `?${switches}`}`;
    const stateless = await statelessClient([l.url], { path, headers: bearer(token) });
    const session = await sessionClient(`${l.url}${path}`, bearer(token));
    opened.push(stateless.client, session);
    return { stateless, session };
  };

  /** The events a call appended: only its own record, when it was refused. */
  const appendedSince = async (before: bigint) =>
    (await t.running.ctx.log.readPage({ after: before, limit: 100 })).map((e) => [e.type, e.meta.stream]);

  it("given read_only=true, when a stateless client writes with an admin's token, then it is refused as in a session (1227), only the call's record is appended and it says analyst", async () => {
    const { stateless, session } = await both(tokens.admin, 'read_only=true');
    const listed = (await stateless.client.listTools()).tools;
    expect(described(listed)).toEqual(described((await session.listTools()).tools));
    expect(listed.find((x) => x.name === 'query')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(stateless.client.getInstructions()).toMatch(/it is read-only/);

    const before = (await t.running.ctx.log.head()).position;
    const write = await callStateless(stateless, 'query', { query: writeSkill() });
    expect(write.isError).toBe(true);
    expect(write.structuredContent).toMatchObject({ type: 'error', error_code: 1227 });
    const sessionWrite = await call(session, 'query', { query: writeSkill() });
    expect(sessionWrite.structuredContent).toMatchObject({ type: 'error', error_code: 1227 });
    expect((await appendedSince(before)).slice(0, 1)).toEqual([['McpCallRecorded', receiptOf(write).stream]]);
    expect((await recordOf(t, write)).data).toMatchObject({
      sessionId: expect.stringMatching(STATELESS_SESSION_ID),
      protocolVersion: STATELESS_REVISION,
      outcome: 'refused',
      caller: { user: ADMIN.name, role: 'analyst', scope: null },
    });
  });

  it("given features=catalog, when a stateless client lists and calls, then only the catalog's tools are offered and another is refused, recorded", async () => {
    const { stateless, session } = await both(tokens.admin, 'features=catalog');
    const names = (await stateless.client.listTools()).tools.map((x) => x.name).sort();
    expect(names).toEqual([...TOOL_GROUPS.catalog].sort());
    expect(names).toEqual((await session.listTools()).tools.map((x) => x.name).sort());
    const withheld = await callStateless(stateless, 'query', { query: 'SELECT 1 AS one' });
    expect(withheld.isError).toBe(true);
    expect(withheld.structuredContent).toMatchObject({ type: 'error', error_code: 1227 });
    expect((await recordOf(t, withheld)).data).toMatchObject({ target: 'query', outcome: 'refused' });
  });

  it("given an auditor's token, when a stateless client runs a write, then it is refused as in a session and nothing but the call's record is appended", async () => {
    const { stateless, session } = await both(tokens.auditor);
    const before = (await t.running.ctx.log.head()).position;
    const write = await callStateless(stateless, 'query', { query: writeSkill() });
    expect(write.isError).toBe(true);
    expect(write.structuredContent).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/auditor/),
    });
    expect(await appendedSince(before)).toEqual([['McpCallRecorded', receiptOf(write).stream]]);
    expect((await recordOf(t, write)).data).toMatchObject({
      outcome: 'refused',
      caller: { user: 'stl_auditor', role: 'auditor', scope: null },
      protocolVersion: STATELESS_REVISION,
    });
    const sessionWrite = await call(session, 'query', { query: writeSkill() });
    expect(sessionWrite.structuredContent).toMatchObject({
      type: 'error',
      error_code: (write.structuredContent as { error_code?: number }).error_code,
    });
  });

  it('given a token scoped to pa, when a stateless client lists databases, then it sees what a session sees, and the record names the scope', async () => {
    const { stateless, session } = await both(tokens['token(pa)']);
    const listed = await callStateless(stateless, 'list_databases');
    expect(rowsOf(listed).map((r) => r.Database)).toContain('pa');
    expect(rowsOf(listed)).toEqual(rowsOf(await call(session, 'list_databases')));
    expect((await recordOf(t, listed)).data.caller).toMatchObject({ scope: 'pa' });
  });

  it('given no token, when a stateless client connects, then it is refused 401 with the challenge, as a session is', async () => {
    const res = await fetch(`${l.url}/mcp/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION } },
      }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="mindledger"/);
    await expect(statelessClient([l.url])).rejects.toThrow();
  });
});
