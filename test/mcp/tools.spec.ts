/**
 * The MCP server with the official client (Client + StreamableHTTPClientTransport) against the real
 * service on a real port, on both stores: initialize, the lists, each tool and what its record in
 * the log says (tool, masked arguments, caller, client, outcome, row count, the answer's hash),
 * and information_schema.MCP_CALLS answering "what did the assistant read".
 */
import crypto from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { McpCallRecorded } from '../../events';
import { canonicalJson } from '../../src/ledger';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenRentalsModel, rentalRows } from '../support/modelsData';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { uniqueName } from '../support/world';
import {
  ALL_TOOLS,
  call,
  eventAt,
  receiptOf,
  rowsOf,
  startMcpWorld,
  textOf,
  type Listening,
  type McpWorld,
} from './support';

type Recorded = McpCallRecorded['data'];

/** The call's record, read from the log itself (not through a masked read model). */
const recordOf = async (t: TestApp, result: { _meta?: Record<string, unknown> }) => {
  const receipt = receiptOf(result);
  const event = await eventAt(t, receipt.position);
  expect(event?.type).toBe('McpCallRecorded');
  expect(event?.meta.stream).toBe(receipt.stream);
  return event!.data as Recorded;
};

/** SHA-256 of the result's canonical JSON without its _meta: what the client recomputes. */
const hashOf = (result: object) => {
  const { _meta: _m, ...answer } = result as Record<string, unknown>;
  void _m;
  return crypto
    .createHash('sha256')
    .update(canonicalJson(answer) ?? '')
    .digest('hex');
};

const sql = async (t: TestApp, query: string) => {
  const answer = await querySql(t, query);
  if (answer.type === 'error') throw new Error(`${query}: ${answer.error_message}`);
  return answer;
};

describe.each(storeKinds)('the MCP server at /mcp/ (%s)', (store) => {
  let world: McpWorld;
  let t: TestApp;
  let l: Listening;
  let client: Client;

  beforeAll(async () => {
    world = await startMcpWorld(store, {}, { name: 'spec-assistant', version: '9.8.7' });
    ({ t, l, client } = world);
  });
  afterAll(() => world?.dispose());

  it("initializes with the SDK's current protocol revision, names itself and says how calls are proved", () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mindledger' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect(client.getInstructions()).toMatch(/verify_call/);
    expect(LATEST_PROTOCOL_VERSION).toBe('2025-11-25');
  });

  it('lists every tool with a JSON schema, a description and truthful hints', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
    expect(Object.keys(byName).sort()).toEqual(ALL_TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description!.length).toBeGreaterThan(60);
    }
    expect(byName.query!.inputSchema.required).toEqual(['query']);
    expect(byName.query!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    for (const name of [
      'list_databases',
      'list_tables',
      'describe_table',
      'search_knowledge_base',
      'predict',
      'verify_call',
    ])
      expect(byName[name]!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.ask_agent!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
  });

  it("runs SQL: rows as structured content and as text, the record naming tool, arguments, caller, client and the answer's hash", async () => {
    const result = await call(client, 'query', { query: "SELECT 1 AS a, 'x' AS b" });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual({
      type: 'table',
      column_names: ['a', 'b'],
      column_types: ['INTEGER', 'VARCHAR'],
      data: [[1, 'x']],
      row_count: 1,
      truncated: false,
    });
    expect(textOf(result)).toContain('| 1 | x |');
    const receipt = receiptOf(result);
    expect(receipt.proof).toBe(`/api/audit/proof/${receipt.position}`);
    expect(receipt.stream).toMatch(/^mcp-session-[0-9a-f-]{36}$/);
    expect(receipt.answer_hash).toBe(hashOf(result));
    const recorded = await recordOf(t, result);
    expect(recorded).toMatchObject({
      method: 'tools/call',
      target: 'query',
      arguments: '{}',
      sql: "SELECT 1 AS a, 'x' AS b",
      project: 'mindsdb',
      caller: { actor: 'address:127.0.0.1', user: null, role: null, scope: null },
      client: { name: 'spec-assistant', version: '9.8.7' },
      protocolVersion: '2025-11-25',
      outcome: 'ok',
      error: null,
      rowCount: 1,
      truncated: false,
      answerHash: hashOf(result),
      traceId: null,
    });
    expect(recorded.ms).toBeGreaterThanOrEqual(0);
  });

  it('runs a write as the SQL endpoint does, and keeps the secrets of its arguments out of the log', async () => {
    const project = uniqueName('mcpw');
    const created = await call(client, 'query', { query: `CREATE PROJECT ${project}` });
    expect(created.structuredContent).toMatchObject({ type: 'ok' });
    expect((await sql(t, 'SHOW DATABASES')).data!.map((r) => r[0])).toContain(project);
    const skill = await call(client, 'query', {
      query: `CREATE SKILL ${project}.s1 USING type = 'text2sql', database = 'files', api_key = 'sk-mcp-secret-123'`,
    });
    expect(skill.isError).toBe(false);
    // The record keeps the statement readable; its secret never reached it (masked, then sealed in place).
    const recorded = await recordOf(t, skill);
    expect(recorded.sql).toContain(`CREATE SKILL ${project}.s1`);
    expect(JSON.stringify(recorded)).not.toContain('sk-mcp-secret-123');
    const shown = await sql(
      t,
      `SELECT SQL FROM information_schema.MCP_CALLS WHERE POSITION = ${receiptOf(skill).position}`,
    );
    expect(shown.data![0]![0]).toBe(
      `CREATE SKILL ${project}.s1 USING type = 'text2sql', database = 'files', api_key = '******'`,
    );
    // The statement itself stored the key as sent (the skill's own event), as every door does.
    expect((await sql(t, `SELECT NAME FROM ${project}.skills`)).data).toEqual([['s1']]);
  });

  it("answers a failing statement as the tool's error, recorded as one", async () => {
    const result = await call(client, 'query', { query: 'SELECT * FROM nowhere_db.nothing' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ type: 'error', error_code: expect.any(Number) });
    expect(await recordOf(t, result)).toMatchObject({
      outcome: 'error',
      error: expect.stringContaining('nowhere_db'),
    });
  });

  it("answers arguments that do not validate as the tool's error, recorded as invalid", async () => {
    const result = await call(client, 'query', { query: 42 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Invalid arguments for query/);
    expect(await recordOf(t, result)).toMatchObject({
      outcome: 'invalid',
      arguments: '{"query":42}',
      sql: null,
    });
  });

  it("lists databases, tables (views, knowledge bases, models) and a table's columns", async () => {
    const project = uniqueName('mcps');
    await sql(t, `CREATE PROJECT ${project}`);
    await sql(t, `CREATE VIEW ${project}.v AS (SELECT 1 AS a, 'x' AS b)`);
    await sql(
      t,
      `CREATE KNOWLEDGE_BASE ${project}.kb USING metadata_columns = ['topic'], content_columns = ['content'], id_column = 'id'`,
    );
    const databases = rowsOf(await call(client, 'list_databases'));
    expect(databases).toEqual(expect.arrayContaining([{ Database: project, TYPE: 'project', ENGINE: null }]));
    const tables = rowsOf(await call(client, 'list_tables', { database: project }));
    expect(tables).toEqual(
      expect.arrayContaining([
        { Table: 'v', Table_type: 'VIEW' },
        { Table: 'kb', Table_type: 'KNOWLEDGE_BASE' },
        { Table: 'models', Table_type: 'BASE TABLE' },
      ]),
    );
    const described = await call(client, 'describe_table', { database: project, table: 'v' });
    expect(rowsOf(described)).toEqual([
      { column: 'a', type: 'INTEGER' },
      { column: 'b', type: 'VARCHAR' },
    ]);
    expect(await recordOf(t, described)).toMatchObject({ target: 'describe_table', project, rowCount: 2 });
  });

  it("offers each table's schema as a resource, and the SQL prompt; reading them is recorded too", async () => {
    const project = uniqueName('mcpr');
    await sql(t, `CREATE PROJECT ${project}`);
    await sql(t, `CREATE VIEW ${project}.v AS (SELECT 1 AS a)`);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['mindledger://schema/{database}/{table}']);
    const { resources } = await client.listResources();
    const uri = `mindledger://schema/${project}/v`;
    expect(resources.map((r) => r.uri)).toContain(uri);
    const read = await client.readResource({ uri });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual({
      type: 'table',
      database: project,
      table: 'v',
      columns: [{ name: 'a', type: 'INTEGER' }],
    });
    expect(await recordOf(t, read)).toMatchObject({ method: 'resources/read', target: uri, outcome: 'ok' });
    await expect(client.readResource({ uri: `mindledger://schema/${project}/missing` })).rejects.toThrow(
      /not found/i,
    );

    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['write_sql']);
    const prompt = await client.getPrompt({ name: 'write_sql', arguments: { task: 'count the orders' } });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toMatch(/backticks/);
    expect(text).toMatch(/count the orders$/);
    expect(await recordOf(t, prompt)).toMatchObject({ method: 'prompts/get', target: 'write_sql' });
  });

  it('searches a knowledge base (built-in embeddings) with the filters SQL allows', async () => {
    const project = uniqueName('mcpk');
    await sql(t, `CREATE PROJECT ${project}`);
    await sql(
      t,
      `CREATE KNOWLEDGE_BASE ${project}.docs USING metadata_columns = ['topic', 'year'], content_columns = ['content'], id_column = 'id'`,
    );
    await sql(
      t,
      `INSERT INTO ${project}.docs (id, content, topic, year) VALUES ('d1', 'Refunds are paid within 30 days of a return.', 'policy', 2021), ('d2', 'Shipping takes three to five days.', 'shipping', 2022), ('d3', 'Refunds for gift cards are not possible.', 'policy', 2023)`,
    );
    const all = rowsOf(
      await call(client, 'search_knowledge_base', {
        project,
        knowledge_base: 'docs',
        query: 'refund',
        limit: 5,
      }),
    );
    expect(all.map((r) => r.id)).toEqual(expect.arrayContaining(['d1', 'd3']));
    expect(Object.keys(all[0]!)).toEqual([
      'id',
      'chunk_id',
      'chunk_content',
      'metadata',
      'distance',
      'relevance',
    ]);
    const filtered = await call(client, 'search_knowledge_base', {
      project,
      knowledge_base: 'docs',
      query: 'refund',
      filters: [
        { column: 'topic', op: '=', value: 'policy' },
        { column: 'year', op: '>=', value: 2022 },
      ],
    });
    expect(rowsOf(filtered).map((r) => r.id)).toEqual(['d3']);
    expect(await recordOf(t, filtered)).toMatchObject({
      target: 'search_knowledge_base',
      project,
      rowCount: 1,
    });
    const many = await call(client, 'search_knowledge_base', {
      project,
      knowledge_base: 'docs',
      query: 'refund',
      filters: [{ column: 'id', op: 'IN', value: ['d1', 'd2'] }],
    });
    expect(
      rowsOf(many)
        .map((r) => r.id)
        .sort(),
    ).toEqual(['d1', 'd2']);
  });

  it('predicts one row with a trained model', async () => {
    const project = uniqueName('mcpm');
    await sql(t, `CREATE PROJECT ${project}`);
    await givenRentalsModel(t, project, rentalRows(60));
    const result = await call(client, 'predict', {
      project,
      model: 'rentals',
      inputs: { sqft: 900, location: 'good' },
    });
    expect(result.isError).toBe(false);
    const [row] = rowsOf(result);
    expect(typeof row!.rental_price).toBe('number');
    const viaSql = await sql(
      t,
      `SELECT rental_price FROM ${project}.rentals WHERE sqft = 900 AND location = 'good'`,
    );
    expect(row!.rental_price).toBeCloseTo(viaSql.data![0]![0] as number, 6);
    expect(await recordOf(t, result)).toMatchObject({
      target: 'predict',
      project,
      outcome: 'ok',
      rowCount: 1,
    });
  });

  describe('an agent', () => {
    let fake: FakeOpenAi;
    beforeAll(async () => {
      fake = await startFakeOpenAi();
    });
    afterAll(async () => {
      await fake.close();
    });

    it('answers, its run on its own stream (via mcp), the call naming the run', async () => {
      const project = uniqueName('mcpa');
      await t.http.post('/api/projects').send({ name: project }).expect(201);
      await t.http
        .post(`/api/projects/${project}/agents`)
        .send({
          agent: {
            name: 'helper',
            model: { model_name: 'gpt-test', provider: 'openai', api_key: 'sk-x', base_url: fake.baseUrl },
          },
        })
        .expect(201);
      fake.when({ lastUser: 'capital of France' }, fakeReply.text('Paris.'));
      const result = await call(client, 'ask_agent', {
        project,
        agent: 'helper',
        question: 'What is the capital of France?',
      });
      expect(result.isError).toBe(false);
      const answer = result.structuredContent as unknown as { answer: string; trace_id: string };
      expect(answer.answer).toBe('Paris.');
      const run = await t.running.ctx.log.readStream(`agent-run-${answer.trace_id}`, 0n);
      expect(run.events.map((e) => e.type)).toEqual([
        'AgentRunStarted',
        'AgentRunModelCalled',
        'AgentRunAnswered',
      ]);
      expect(run.events[0]!.data).toMatchObject({
        via: 'mcp',
        agent: 'helper',
        question: 'What is the capital of France?',
      });
      expect(await recordOf(t, result)).toMatchObject({
        target: 'ask_agent',
        project,
        traceId: answer.trace_id,
        outcome: 'ok',
      });
    });
  });

  it('shows every call in information_schema.MCP_CALLS, as agent runs show in AGENT_RUNS', async () => {
    const marker = uniqueName('marker');
    const made = await call(client, 'query', { query: `SELECT '${marker}' AS m` });
    const rows = rowsOf(
      await call(client, 'query', {
        query: `SELECT SESSION_ID, SEQ, TARGET, OUTCOME, ROW_COUNT, CLIENT_NAME, CLIENT_VERSION, ANSWER_HASH, POSITION FROM information_schema.MCP_CALLS WHERE SQL LIKE '%${marker}%' AND SQL NOT LIKE '%MCP_CALLS%'`,
      }),
    );
    const receipt = receiptOf(made);
    expect(rows).toEqual([
      {
        SESSION_ID: receipt.stream.replace('mcp-session-', ''),
        SEQ: receipt.seq,
        TARGET: 'query',
        OUTCOME: 'ok',
        ROW_COUNT: 1,
        CLIENT_NAME: 'spec-assistant',
        CLIENT_VERSION: '9.8.7',
        ANSWER_HASH: receipt.answer_hash,
        POSITION: receipt.position,
      },
    ]);
    // Over the SQL endpoint as well: it is a table of the catalog like any other.
    const overHttp = await sql(
      t,
      `SELECT count(*) AS n FROM information_schema.MCP_CALLS WHERE SQL LIKE '%${marker}%'`,
    );
    expect(Number(overHttp.data![0]![0])).toBeGreaterThanOrEqual(2);
  });

  it('keeps a session to its client: an unknown session is 404, a request without one must initialize first', async () => {
    const res = await fetch(`${l.url}/mcp/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': 'no-such-session',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: -32001 } });
    const none = await fetch(`${l.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(none.status).toBe(400);
  });
});

describe('MCP_ENABLED=false', () => {
  it('serves no MCP server: /mcp/ is 404', async () => {
    const t = await startTestApp('sqlite', { MCP_ENABLED: 'false' });
    try {
      await t.http.post('/mcp/').send({ jsonrpc: '2.0', id: 1, method: 'initialize' }).expect(404);
    } finally {
      await t.dispose();
    }
  });
});
