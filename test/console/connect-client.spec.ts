/**
 * Issue 60 item 5, the console's "Connect an AI client" panel, in Chromium against the service
 * with sign-in on: the admin chooses a client, a project, read-only and tool groups; the panel makes
 * a token scoped to the project and writes the configuration; the official MCP SDK's clients then
 * connect with exactly what the panel wrote and are offered exactly what it said, narrowed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { mcpClientConfig, mcpUrl, type McpConnection } from '../../console/src/mcpConnect';
import type { TestApp } from '../support/app';
import { ADMIN, login, sqlOver, startAuthApp } from '../auth/support';
import { call, rowsOf, textOf } from '../mcp/support';
import { ensureConsoleBuilt, launchChromium, listen, screenshotPath } from './browser';
import { untilTrue } from '../support/until';

jest.setTimeout(120_000);

describe('the configuration the panel writes (pure)', () => {
  const connection: McpConnection = {
    origin: 'http://127.0.0.1:47334',
    transport: 'sse',
    readOnly: true,
    project: 'sales',
    features: ['catalog', 'sql'],
    token: "mlt_it's",
    name: 'mindledger-sales',
  };

  it('puts the switches on the URL as docs/mcp.md writes them, and nothing when nothing narrows', () => {
    expect(mcpUrl(connection)).toBe(
      'http://127.0.0.1:47334/mcp/sse?read_only=true&project=sales&features=catalog,sql',
    );
    expect(
      mcpUrl({ ...connection, transport: 'streamable', readOnly: false, project: null, features: null }),
    ).toBe('http://127.0.0.1:47334/mcp/');
  });

  it("writes each client's shape, the token in its header, and a shell-safe Claude Code command", () => {
    expect(JSON.parse(mcpClientConfig('cursor', connection))).toEqual({
      mcpServers: {
        'mindledger-sales': { url: mcpUrl(connection), headers: { Authorization: "Bearer mlt_it's" } },
      },
    });
    expect(JSON.parse(mcpClientConfig('vscode', { ...connection, token: null }))).toEqual({
      servers: { 'mindledger-sales': { type: 'sse', url: mcpUrl(connection) } },
    });
    expect(mcpClientConfig('claude-code', connection)).toBe(
      `claude mcp add --transport sse 'mindledger-sales' '${mcpUrl(connection)}' --header 'Authorization: Bearer mlt_it'\\''s'`,
    );
  });
});

describe('the "Connect AI" view in Chromium, sign-in on', () => {
  let t: TestApp;
  let server: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  let admin: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    browser = await launchChromium();
    t = await startAuthApp('sqlite');
    server = await listen(t);
    admin = await login(t, ADMIN.name, ADMIN.password);
    for (const sql of ['CREATE PROJECT sales', 'CREATE VIEW sales.leads AS (SELECT 1 AS id)'])
      expect((await sqlOver(t, admin, sql)).type).not.toBe('error');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await browser?.close();
    await server?.close();
    await t?.dispose();
  });

  const signedInPage = async (): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url + '/');
    await page.fill('[data-testid="login-username"]', ADMIN.name);
    await page.fill('[data-testid="login-password"]', ADMIN.password);
    await page.click('[data-testid="signin-form"] button[type="submit"]');
    await page.waitForSelector('[data-testid="project-sales"]', { state: 'attached' });
    await page.click('[data-testid="view-connect"]');
    await page.waitForSelector('[data-testid="connect-group-catalog"]');
    expect(errors).toEqual([]);
    return page;
  };

  /** The panel's configuration once it holds a token (the text the user copies). */
  const configWithToken = async (page: Page) => {
    await untilTrue(
      'a token in the configuration',
      async () => (await page.locator('[data-testid="connect-config"]').innerText()).includes('mlt_'),
      { ms: 20_000 },
    );
    return page.locator('[data-testid="connect-config"]').innerText();
  };

  it('writes a Cursor configuration whose URL and scoped token connect, offered exactly the tools it said', async () => {
    const page = await signedInPage();
    await page.selectOption('[data-testid="connect-client"]', 'cursor');
    await page.selectOption('[data-testid="connect-project"]', 'sales');
    expect(await page.isChecked('[data-testid="connect-read-only"]')).toBe(true);
    for (const group of ['knowledge_bases', 'agents', 'models', 'audit'])
      await page.uncheck(`[data-testid="connect-group-${group}"]`);
    // What the server offers such a connection, in its order: the panel shows the server's answer.
    const status = await t.http
      .get('/mcp/status?read_only=true&project=sales&features=catalog,sql')
      .set('Cookie', admin)
      .expect(200);
    const names = status.body.tool_names as string[];
    expect([...names].sort()).toEqual(['describe_table', 'list_databases', 'list_tables', 'query']);
    // Each unchecked group asks the server again; the panel settles on the last answer (waiting for
    // any answer naming `query` read the one before the last box was unchecked).
    const offered = page.locator('[data-testid="connect-tools"]');
    const expected = `Tools offered: ${names.join(', ')}`;
    await untilTrue(`the panel to show "${expected}"`, async () => (await offered.innerText()) === expected, {
      ms: 20_000,
      explain: async () => `the panel says: ${await offered.innerText()}`,
    });
    await page.click('[data-testid="connect-make-token"]');
    const config = JSON.parse(await configWithToken(page)) as {
      mcpServers: Record<string, { url: string; headers: { Authorization: string } }>;
    };
    await page.screenshot({ path: screenshotPath('connect-client') });
    const entry = config.mcpServers['mindledger-sales']!;
    expect(entry.url).toBe(`${server.url}/mcp/?read_only=true&project=sales&features=catalog,sql`);

    // The token is the admin's, scoped to the project, and listed (never shown again).
    const tokens = await t.http.get('/api/tokens').set('Cookie', admin).expect(200);
    // The other case makes an unscoped token of its own (jest --randomize may run it first).
    expect((tokens.body as { project: string | null }[]).filter((x) => x.project !== null)).toEqual([
      expect.objectContaining({ name: 'mindledger-sales (Cursor)', project: 'sales' }),
    ]);
    expect(JSON.stringify(tokens.body)).not.toContain(entry.headers.Authorization.slice(7));

    const client = new Client({ name: 'spec-connect-cursor', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }),
    );
    expect((await client.listTools()).tools.map((x) => x.name)).toEqual(names);
    const tables = await call(client, 'list_tables', { database: 'sales' });
    expect(textOf(tables)).toContain('leads');
    // Read-only and scoped: the admin's token cannot change anything through this connection.
    const write = await call(client, 'query', { query: 'CREATE PROJECT other' });
    expect(write.isError).toBe(true);
    expect((await sqlOver(t, admin, 'SHOW DATABASES')).data?.flat()).not.toContain('other');
    const read = await call(client, 'query', { query: 'SELECT id FROM leads' });
    expect(rowsOf(read)).toEqual([{ id: 1 }]);
  });

  it('writes a VS Code configuration for MindsDB’s /mcp/sse URL that the SDK’s SSE client opens', async () => {
    const page = await signedInPage();
    await page.selectOption('[data-testid="connect-client"]', 'vscode');
    await page.selectOption('[data-testid="connect-transport"]', 'sse');
    await page.uncheck('[data-testid="connect-read-only"]');
    await page.click('[data-testid="connect-make-token"]');
    const config = JSON.parse(await configWithToken(page)) as {
      servers: Record<string, { type: string; url: string; headers: { Authorization: string } }>;
    };
    const entry = config.servers.mindledger!;
    expect(entry.type).toBe('sse');
    expect(entry.url).toBe(`${server.url}/mcp/sse`);
    const client = new Client({ name: 'spec-connect-vscode', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new SSEClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }),
    );
    // Nothing narrowed: every tool, as the server's own status lists them for no switches.
    const status = await t.http.get('/mcp/status').set('Cookie', admin).expect(200);
    expect((await client.listTools()).tools.map((x) => x.name)).toEqual(status.body.tool_names);
    expect(status.body.tool_names).toContain('ask_agent');
  });
});
