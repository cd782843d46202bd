import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { sessionServer, type ServerDeps } from './server';
import type { Session, sessionRegistry } from './sessions';
import { NO_SWITCHES } from './switches';

/**
 * Everything of the MCP SDK the routes use, in one module the routes load on the first MCP request
 * (src/mcp/routes.ts): the SDK and its JSON-schema validator are a fifth of what a process loads.
 */
export { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS };
/** The 2026-07-28 era's door (SDK v2), loaded with the rest. */
export { statelessDoor, STATELESS_PROTOCOL_VERSIONS, type StatelessDoor } from './stateless';

/** A session to open: what its server is made of, where it is registered, and for whom. */
export type SessionOpening = {
  readonly deps: ServerDeps;
  readonly sessions: ReturnType<typeof sessionRegistry>;
  readonly owner: string;
  readonly principal?: string;
};

/**
 * Opens a session for an `initialize` request (its server and transport), registered to `owner`
 * once the transport names it, and answers the request.
 */
export const openSession = async (
  { deps, sessions, owner, principal }: SessionOpening,
  req: Request,
  res: Response,
) => {
  const server = sessionServer(deps);
  const switches = deps.switches ?? NO_SWITCHES;
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    onsessioninitialized: (id) =>
      sessions.add({ id, transport, server, owner, principal, switches, lastUsed: Date.now() }),
    onsessionclosed: (id) => sessions.forget(id),
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
};

/**
 * Opens a session over the older HTTP+SSE transport (MindsDB's `/mcp/sse`, which Cursor and other
 * clients are told to use): this GET's response is the server's event stream, whose first event
 * names where the client POSTs its messages (`{endpoint}?sessionId=…`). The same server, tools and
 * records as a Streamable HTTP session; the session ends with the stream.
 */
export const openSseSession = async (
  { deps, sessions, owner, principal }: SessionOpening,
  endpoint: string,
  res: Response,
) => {
  const server = sessionServer(deps);
  const transport = new SSEServerTransport(endpoint, res);
  const id = transport.sessionId;
  transport.onclose = () => sessions.forget(id);
  sessions.add({
    id,
    transport,
    server,
    owner,
    principal,
    switches: deps.switches ?? NO_SWITCHES,
    lastUsed: Date.now(),
  });
  await server.connect(transport);
};

/** A message POSTed to an SSE session (`/mcp/messages?sessionId=…`); false when the session is not one. */
export const postToSseSession = async (session: Session, req: Request, res: Response) => {
  if (!(session.transport instanceof SSEServerTransport)) return false;
  await session.transport.handlePostMessage(req, res, req.body);
  return true;
};

/** A request to a Streamable HTTP session (`/mcp/`, `/mcp/streamable`); false when the session is not one. */
export const requestToStreamableSession = async (session: Session, req: Request, res: Response) => {
  if (!(session.transport instanceof StreamableHTTPServerTransport)) return false;
  await session.transport.handleRequest(req, res, req.body);
  return true;
};
