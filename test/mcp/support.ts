/**
 * The MCP specs' world: the app on a real port (the SDK's client speaks HTTP to it), and the
 * official MCP client (Client + StreamableHTTPClientTransport) signed in as a caller.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type StoreKind, type TestApp } from '../support/app';

/** The app listening on a free port of 127.0.0.1. */
export const listen = async (t: TestApp) => {
  const server = http.createServer(t.running.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export type Listening = Awaited<ReturnType<typeof listen>>;

/** A connected MCP client (initialized), sending `headers` on every request (a bearer token, a cookie). */
export const mcpClient = async (
  base: string,
  headers: Record<string, string> = {},
  info = { name: 'mcp-spec-client', version: '1.2.3' },
) => {
  const client = new Client(info, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
};

/**
 * The app on a port with one connected MCP client (`info` names it), as most MCP specs start;
 * `dispose` closes all three, and a start that fails half-way closes what it opened.
 */
export const startMcpWorld = async (
  store: StoreKind,
  overrides: Record<string, string> = {},
  info?: { name: string; version: string },
) => {
  const t = await startTestApp(store, overrides);
  let l: Listening | undefined;
  try {
    l = await listen(t);
    const client = await mcpClient(l.url, {}, info);
    const opened = l;
    return {
      t,
      l: opened,
      client,
      dispose: async () => {
        await client.close();
        await opened.close();
        await t.dispose();
      },
    };
  } catch (error) {
    await l?.close();
    await t.dispose();
    throw error;
  }
};

export type McpWorld = Awaited<ReturnType<typeof startMcpWorld>>;

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** What the server records of a call, carried in the result's `_meta`. */
export type Receipt = {
  position: number;
  stream: string;
  seq: number;
  answer_hash: string;
  proof: string;
  verify: { tool: string; arguments: { position: number; answer_hash: string } };
};

export const receiptOf = (result: { _meta?: Record<string, unknown> }) => {
  const receipt = result._meta?.['io.mindledger/call'] as Receipt | undefined;
  if (!receipt) throw new Error(`no receipt in ${JSON.stringify(result).slice(0, 400)}`);
  return receipt;
};

/** A tool's structured answer (MindsDB's `{type, column_names, data, …}`). */
export type Structured = {
  type: 'table' | 'ok' | 'error';
  column_names?: string[];
  column_types?: string[];
  data?: unknown[][];
  row_count?: number;
  truncated?: boolean;
  error_code?: number | null;
  error_message?: string;
};

export const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult & {
    structuredContent?: Structured & Record<string, unknown>;
  };

export const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** The rows of a table answer, as objects by column name. */
export const rowsOf = (result: { structuredContent?: Structured }) => {
  const s = result.structuredContent;
  if (!s || s.type !== 'table') throw new Error(`a table expected: ${JSON.stringify(s).slice(0, 400)}`);
  return (s.data ?? []).map((r) => Object.fromEntries((s.column_names ?? []).map((c, i) => [c, r[i]])));
};

/** The event at a call's receipt position, read from the log (committed before the answer went out). */
export const eventAt = async (t: TestApp, position: string | number | bigint) => {
  const event = await t.running.ctx.log.eventAt(BigInt(position));
  if (!event) throw new Error(`the log holds no event at position ${position}`);
  return event;
};

/** Every tool the server offers a connection nothing narrows, by name in order (what the specs expect, written once). */
export const ALL_TOOLS = [
  'ask_agent',
  'describe_table',
  'list_databases',
  'list_tables',
  'predict',
  'query',
  'search_knowledge_base',
  'verify_call',
];
