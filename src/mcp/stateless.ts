import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { mcpHandlers, serverIdentity, type CallContext, type ServerDeps } from './server';
import { SWITCHES_KEY } from './service';
import { NO_SWITCHES, type Switches } from './switches';

/**
 * MCP's stateless era (revision 2026-07-28): no `initialize`, no `Mcp-Session-Id`; each request
 * carries its protocol version, client and capabilities in its `_meta` envelope, and `server/discover`
 * tells a client what the server is. The SDK v2's `createMcpHandler` serves each request with a
 * server of its own made by the factory below, from the same handlers as a 2025 session's
 * (src/mcp/server.ts): nothing a request needs is kept in this process between requests, so any node
 * of a scaled-out deployment answers it (no sticky routing). 2025-era traffic (sessions, the
 * `initialize` handshake) stays with SDK 1.x's transports (src/mcp/transport.ts): this handler
 * rejects it (`legacy: 'reject'`) and the routes never send it here.
 */

/** The stateless revisions the SDK v2 serves (it does not export its own list of them). */
export const STATELESS_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

/** The per-request envelope's keys the record keeps, as the client sent them (untrusted: checked). */
const envelopeSchema = z.object({
  [PROTOCOL_VERSION_META_KEY]: z.string().optional().catch(undefined),
  [CLIENT_INFO_META_KEY]: z.object({ name: z.string(), version: z.string() }).optional().catch(undefined),
});

/**
 * A stateless request's call context. It has no session: the record names the call by an id of its
 * own (`stateless-<uuid>`, one stream per call, so calls on different nodes never contend), and the
 * client and protocol version its envelope names.
 */
const statelessCall = (server: Server, ctx: ServerContext): CallContext => {
  const id = `stateless-${crypto.randomUUID()}`;
  return {
    authInfo: ctx.http?.authInfo,
    session: () => {
      const envelope = envelopeSchema.parse(ctx.mcpReq.envelope ?? {});
      const client = envelope[CLIENT_INFO_META_KEY];
      return {
        id,
        client: client ? { name: client.name, version: client.version } : null,
        protocolVersion: envelope[PROTOCOL_VERSION_META_KEY] ?? server.getNegotiatedProtocolVersion() ?? null,
      };
    },
    signal: ctx.mcpReq.signal,
    progressToken: ctx.mcpReq._meta?.progressToken,
    notify: (notification) => ctx.mcpReq.notify(notification),
  };
};

/** One 2026-07-28 server (the SDK v2's low-level `Server`) for one request. */
export const statelessServer = (deps: ServerDeps) => {
  const { info, options } = serverIdentity(deps);
  const server = new Server(info, options);
  const h = mcpHandlers(deps);
  const call = (ctx: ServerContext) => statelessCall(server, ctx);
  server.setRequestHandler('tools/list', h.listTools);
  server.setRequestHandler('tools/call', (request, ctx) => h.callTool(request, call(ctx)));
  server.setRequestHandler('resources/templates/list', h.listResourceTemplates);
  server.setRequestHandler('resources/list', (_request, ctx) => h.listResources(call(ctx)));
  server.setRequestHandler('resources/read', (request, ctx) => h.readResource(request, call(ctx)));
  server.setRequestHandler('prompts/list', h.listPrompts);
  server.setRequestHandler('prompts/get', (request, ctx) => h.getPrompt(request, call(ctx)));
  return server;
};

/** The switches the routes checked for this request, carried beside the caller in `authInfo.extra`. */
const switchesCarried = (extra: Record<string, unknown> | undefined): Switches =>
  (extra?.[SWITCHES_KEY] as Switches | undefined) ?? NO_SWITCHES;

/**
 * The stateless door: whether a request is of the 2026-07-28 era (the SDK's own classification:
 * it carries the `_meta` envelope claim), and the handler that serves it. The routes have
 * authenticated the caller, checked the URL's switches and put both in `req.auth` first.
 */
export const statelessDoor = (depsFor: (switches: Switches) => ServerDeps, logger: Logger) => {
  const handler = createMcpHandler((ctx) => statelessServer(depsFor(switchesCarried(ctx.authInfo?.extra))), {
    // The 2025 era keeps its sessions (SDK 1.x); this handler never serves it.
    legacy: 'reject',
    // Requests the SDK refused (a revision it does not serve, a malformed envelope): the client's doing.
    onerror: (error) => logger.debug({ err: error }, 'MCP stateless request refused'),
  });
  // A failure of the handler itself (answered 500 by the adapter); a tool's failure is logged where it is recorded.
  const serve = toNodeHandler(handler, {
    onerror: (error) => logger.error({ err: error }, 'MCP stateless request failed'),
  });
  return {
    /** A 2026-07-28 request (a body read by express.json is classified as parsed). */
    isStateless: async (req: Request) =>
      !(await isLegacyRequest(await toWebRequest(req, req.body), req.body)),
    serve: (req: Request, res: Response) => serve(req, res, req.body),
  };
};

export type StatelessDoor = ReturnType<typeof statelessDoor>;
