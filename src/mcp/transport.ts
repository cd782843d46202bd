import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { sessionServer, type ServerDeps } from './server';
import type { sessionRegistry } from './sessions';

/**
 * Everything of the MCP SDK the routes use, in one module the routes load on the first MCP request
 * (src/mcp/routes.ts): the SDK and its JSON-schema validator are a fifth of what a process loads.
 */
export { isInitializeRequest };

/**
 * Opens a session for an `initialize` request (its server and transport), registered to `owner`
 * once the transport names it, and answers the request.
 */
export const openSession = async (
  deps: ServerDeps,
  sessions: ReturnType<typeof sessionRegistry>,
  owner: string,
  req: Request,
  res: Response,
  principal?: string,
) => {
  const server = sessionServer(deps);
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    onsessioninitialized: (id) =>
      sessions.add({ id, transport, server, owner, principal, lastUsed: Date.now() }),
    onsessionclosed: (id) => sessions.forget(id),
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
};
