/**
 * The stateless era's client (revision 2026-07-28) as the specs use it: the official SDK v2 client,
 * pinned to the revision (no `initialize`, no session), behind a load balancer with no sticky
 * routing: each HTTP request goes to the next node in turn. The client carries the highest log
 * position it was answered with (X-Log-Position) as X-Min-Log-Position, so a read on one node shows
 * a write made through another (src/http/logPosition.ts).
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import type { Structured } from './support';

export const STATELESS_REVISION = '2026-07-28';

/** One HTTP request as the balancer sent it: the node, the JSON-RPC method and the answer's status. */
export type Served = { readonly node: string; readonly method: string; readonly status: number };

const methodOf = (body: unknown) => {
  if (typeof body !== 'string') return '';
  const parsed: unknown = JSON.parse(body);
  return typeof parsed === 'object' && parsed !== null && 'method' in parsed ? String(parsed.method) : '';
};

/** A fetch that sends each request to the next of `nodes` (origins) in turn, carrying the client's log position. */
export const roundRobin = (nodes: readonly string[]) => {
  let next = 0;
  let position: bigint | null = null;
  const served: Served[] = [];
  const fetchNext = async (url: string | URL, init?: RequestInit) => {
    const node = nodes[next++ % nodes.length]!;
    const target = new URL(String(url));
    target.host = new URL(node).host;
    const headers = new Headers(init?.headers);
    if (position !== null) headers.set('X-Min-Log-Position', position.toString());
    const res = await fetch(target, { ...init, headers });
    served.push({ node, method: methodOf(init?.body), status: res.status });
    const answered = res.headers.get('x-log-position');
    if (answered !== null && (position === null || BigInt(answered) > position)) position = BigInt(answered);
    return res;
  };
  return { fetch: fetchNext, served };
};

/**
 * A stateless client connected (`server/discover`) through the balancer to `path` (`/mcp/`, with
 * any URL switches) of `nodes`, sending `headers` on every request.
 */
export const statelessClient = async (
  nodes: readonly string[],
  options: {
    path?: string;
    headers?: Record<string, string>;
    info?: { name: string; version: string };
  } = {},
) => {
  const balancer = roundRobin(nodes);
  const client = new Client(options.info ?? { name: 'stateless-spec-client', version: '2.0.0' }, {
    versionNegotiation: { mode: { pin: STATELESS_REVISION } },
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${nodes[0]}${options.path ?? '/mcp/'}`), {
    requestInit: { headers: options.headers ?? {} },
    fetch: balancer.fetch,
  });
  await client.connect(transport);
  return { client, served: balancer.served };
};

export type StatelessClient = Awaited<ReturnType<typeof statelessClient>>;

export const callStateless = async (c: StatelessClient, name: string, args: Record<string, unknown> = {}) =>
  (await c.client.callTool({ name, arguments: args })) as CallToolResult & {
    structuredContent?: Structured & Record<string, unknown>;
  };
