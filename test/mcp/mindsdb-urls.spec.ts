/**
 * Issue 60 items 1, 3 and 4: MindsDB's MCP URLs (`/mcp/sse` with `/mcp/messages`, `/mcp/streamable`,
 * `/mcp/status`) with the official SDK's client for each transport, the same tools, roles and records
 * on each; a tool's error the client can read (never "-32602 Structured content does not match");
 * names as SQL writes them (`project.name`); `describe_table` on a trained and an LLM model.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpCallRecorded } from '../../events';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { givenRentalsModel, rentalRows } from '../support/modelsData';
import { closeStandIns, givenLlmModel } from '../llmModels/world';
import { uniqueName } from '../support/world';
import { ADMIN, login, startAuthApp, tokensByRole } from '../auth/support';
import {
  ALL_TOOLS,
  bearer,
  call,
  eventAt,
  listen,
  mcpClient,
  receiptOf,
  rowsOf,
  textOf,
  type Listening,
} from './support';

const recordOf = async (t: TestApp, result: { _meta?: Record<string, unknown> }) => {
  const receipt = receiptOf(result);
  const event = await eventAt(t, receipt.position);
  expect(event?.type).toBe('McpCallRecorded');
  return event!.data as McpCallRecorded['data'];
};

const transports = {
  sse: (base: string, headers: Record<string, string>) =>
    new SSEClientTransport(new URL(`${base}/mcp/sse`), { requestInit: { headers } }),
  streamable: (base: string, headers: Record<string, string>) =>
    new StreamableHTTPClientTransport(new URL(`${base}/mcp/streamable`), { requestInit: { headers } }),
};

describe("MindsDB's MCP URLs, errors and names (sqlite)", () => {
  let t: TestApp;
  let l: Listening;
  let admin: string;
  let analyst: string;
  const open: Client[] = [];
  const connect = async (kind: keyof typeof transports, token: string) => {
    const client = new Client({ name: `spec-${kind}`, version: '1.0.0' });
    await client.connect(transports[kind](l.url, bearer(token)));
    open.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    l = await listen(t);
    const tokens = await tokensByRole(t, await login(t, ADMIN.name, ADMIN.password), 'mcpu');
    admin = tokens.admin;
    analyst = tokens.analyst;
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await l?.close();
    await t?.dispose();
  });

  it.each(['sse', 'streamable'] as const)(
    '%s: lists the same tools, runs query, refuses an analyst’s write, and records each call',
    async (kind) => {
      expect(admin).toMatch(/^mlt_/);
      const client = await connect(kind, admin);
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(ALL_TOOLS);
      const result = await call(client, 'query', { query: `SELECT 'via ${kind}' AS door` });
      expect(rowsOf(result)).toEqual([{ door: `via ${kind}` }]);
      expect(await recordOf(t, result)).toMatchObject({
        method: 'tools/call',
        target: 'query',
        outcome: 'ok',
        rowCount: 1,
        client: { name: `spec-${kind}`, version: '1.0.0' },
      });

      const reader = await connect(kind, analyst);
      const refused = await call(reader, 'query', { query: `CREATE PROJECT ${uniqueName('nope')}` });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ type: 'error', error_code: 1227 });
      expect(await recordOf(t, refused)).toMatchObject({ outcome: 'refused', caller: { role: 'analyst' } });
    },
  );

  it('the SSE stream announces /mcp/messages; a session is used only by whoever opened it; no credentials: 401', async () => {
    const res = await fetch(`${l.url}/mcp/sse`, { headers: bearer(admin) });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^event: endpoint\ndata: \/mcp\/messages\?sessionId=[0-9a-f-]{36}/);
    const endpoint = /data: (\S+)/.exec(first)![1]!;
    const stolen = await fetch(`${l.url}${endpoint}`, {
      method: 'POST',
      headers: { ...bearer(analyst), 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(stolen.status).toBe(404);
    await reader.cancel();
    const anonymous = await fetch(`${l.url}/mcp/sse`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer realm="mindledger"/);
  });

  it('/mcp/status answers a health JSON: status, protocol versions, tool count', async () => {
    const res = await fetch(`${l.url}/mcp/status`, { headers: bearer(admin) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      protocol_versions: expect.arrayContaining(['2025-11-25', '2024-11-05']),
      tools: 8,
      transports: { streamable_http: ['/mcp/', '/mcp/streamable'], sse: { stream: '/mcp/sse' } },
    });
  });
});

describe('MCP errors, names and models (sqlite, sign-in off)', () => {
  let t: TestApp;
  let l: Listening;
  let client: Client;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    l = await listen(t);
    client = await mcpClient(l.url);
  });
  afterAll(async () => {
    await client?.close();
    await closeStandIns();
    await l?.close();
    await t?.dispose();
  });

  it('a failing ask_agent is a tool error the client reads (no -32602), recorded with why', async () => {
    const result = await call(client, 'ask_agent', { agent: 'mindsdb.no_such_agent', question: 'hi' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(/no_such_agent/);
    expect(await recordOf(t, result)).toMatchObject({
      target: 'ask_agent',
      outcome: 'error',
      project: 'mindsdb',
    });
    const invalid = await call(client, 'ask_agent', { agent: '', question: '' });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/Invalid arguments for ask_agent/);
  });

  it('names as SQL writes them: project.name in every tool; a name and a project that disagree are refused by name', async () => {
    const kb = await call(client, 'search_knowledge_base', {
      knowledge_base: 'mindsdb.kb_missing',
      query: 'x',
    });
    expect(textOf(kb)).not.toMatch(/mindsdb\.mindsdb/);
    expect(textOf(kb)).toMatch(/kb_missing/);
    const project = uniqueName('mcpn');
    await querySql(t, `CREATE PROJECT ${project}`);
    await querySql(t, `CREATE VIEW ${project}.v AS (SELECT 1 AS a)`);
    for (const args of [
      { table: `${project}.v` },
      { table: `\`${project}\`.\`v\`` },
      { database: project, table: 'v' },
    ])
      expect(rowsOf(await call(client, 'describe_table', args))).toEqual([{ column: 'a', type: 'INTEGER' }]);
    const clash = await call(client, 'predict', { project: 'mindsdb', model: `${project}.m`, inputs: {} });
    expect(clash.isError).toBe(true);
    expect(textOf(clash)).toMatch(/names project .* but project is mindsdb/);
    expect(await recordOf(t, clash)).toMatchObject({ outcome: 'invalid' });
  });

  it('describe_table types a trained model’s features as the model does, and describes an LLM model', async () => {
    const project = uniqueName('mcpd');
    await querySql(t, `CREATE PROJECT ${project}`);
    await givenRentalsModel(t, project, rentalRows(40));
    const rows = rowsOf(await call(client, 'describe_table', { table: `${project}.rentals` }));
    expect(rows.slice(0, 3)).toEqual([
      { column: 'sqft', type: 'BIGINT', role: 'feature' },
      { column: 'location', type: 'VARCHAR', role: 'feature' },
      { column: 'rental_price', type: 'BIGINT', role: 'target' },
    ]);
    const llm = await givenLlmModel(t);
    const described = await call(client, 'describe_table', { table: `${llm.project}.${llm.model}` });
    expect(described.isError).toBe(false);
    expect(rowsOf(described)).toEqual([
      { column: 'text', type: 'VARCHAR', role: 'feature' },
      { column: 'answer', type: 'VARCHAR', role: 'target' },
    ]);
  });
});
