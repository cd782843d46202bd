import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { AppContext } from '../context';
import { invalid, isDomainError } from '../shared/errors';
import { nameKey } from '../shared/names';
import { currentRequest, withRequest, type RequestContext } from '../shared/requestContext';
import type { McpPorts } from './ports';
import { actorOf, CALLER_KEY, mcpCallsService, SWITCHES_KEY, type Caller } from './service';
import { sessionRegistry } from './sessions';
import {
  givenText,
  narrowPrincipal,
  NO_SWITCHES,
  parseSwitches,
  sameSwitches,
  switchesOf,
  switchesText,
  toolsFor,
  TOOL_GROUPS,
  type Switches,
} from './switches';
import { mcpTools } from './tools';
import type * as Transport from './transport';

/** The SDK is loaded by the first MCP request, not at start (src/mcp/transport.ts). */
let transportModule: typeof Transport | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const transport = () => (transportModule ??= require('./transport') as typeof Transport);

/** MindsDB's path for its MCP API, on the HTTP port. */
const MCP_PATH = '/mcp';
/** MindsDB's other MCP URLs: Streamable HTTP again, the older HTTP+SSE transport, and a health answer. */
const MCP_STREAMABLE_PATH = `${MCP_PATH}/streamable`;
const MCP_SSE_PATH = `${MCP_PATH}/sse`;
const MCP_MESSAGES_PATH = `${MCP_PATH}/messages`;
const MCP_STATUS_PATH = `${MCP_PATH}/status`;
const isMcpPath = (path: string) => /^\/mcp(\/(streamable|sse|messages))?\/?$/i.test(path);
const METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

const originOf = (req: Request) => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

/**
 * The challenge the MCP authorization spec asks of a 401 (RFC 6750, RFC 9728): a bearer token, and
 * where the protected resource's metadata says how to get one.
 */
const challenge = (req: Request, invalidToken: boolean) =>
  `Bearer realm="mindledger"${invalidToken ? ', error="invalid_token"' : ''}, resource_metadata="${originOf(req)}${METADATA_PATH}"`;

/** A JSON-RPC error as the transport answers outside a session. */
const rpcError = (res: Response, status: number, code: number, message: string) =>
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * What the MCP routes share: the ports, every tool, the call records, the open sessions (2025 era)
 * and the stateless door (2026-07-28 era), made by the first request that needs it.
 */
type McpDoor = {
  readonly ports: McpPorts;
  readonly tools: ReturnType<typeof mcpTools>;
  readonly calls: ReturnType<typeof mcpCallsService>;
  readonly sessions: ReturnType<typeof sessionRegistry>;
  readonly logger: Logger;
  readonly stateless: () => Transport.StatelessDoor;
};

/**
 * The caller of an MCP request (its request context, as the guard made it), or undefined once a
 * 401 with the challenge has been answered (sign-in on, nobody signed in).
 */
const signedIn = async (ports: McpPorts, req: Request, res: Response) => {
  const request = currentRequest() ?? { requestId: '', interface: 'rest' as const };
  if (!request.principal && (await ports.authEnabled())) {
    res.setHeader('WWW-Authenticate', challenge(req, false));
    rpcError(res, 401, -32001, 'Authorization is required: send a bearer token (POST /api/tokens makes one)');
    return undefined;
  }
  const owner = actorOf({ request });
  // The session counts against its user's share (every token of theirs alike), not the process's.
  const principal = request.principal ? `user:${request.principal.user.toLowerCase()}` : owner;
  return { owner, principal, request };
};

/**
 * Carries the caller to the session's server in the SDK's `req.auth`: their principal narrowed by
 * the session's switches (src/mcp/switches.ts), so every tool, SQL statement and agent run of the
 * session runs as the narrowed caller; the record names the signed-in user. A stateless request's
 * server is made from the switches carried beside the caller.
 */
const authorize = (req: Request, request: RequestContext, switches: Switches) => {
  const owner = actorOf({ request });
  const principal = narrowPrincipal(request.principal, switches, owner);
  const caller: Caller = {
    request: principal ? { ...request, principal } : request,
    user: request.principal?.user ?? null,
  };
  (req as Request & { auth?: unknown }).auth = {
    token: '',
    clientId: owner,
    scopes: [],
    extra: { [CALLER_KEY]: caller, [SWITCHES_KEY]: switches },
  };
};

/**
 * The project a `project=` switch names, as the service spells it: a project (not `files`, an
 * integration or information_schema) that exists. Asked of the catalog without the caller's
 * scope: by then `narrowPrincipal` has refused a token scoped to another project.
 */
const existingProject = async (ports: McpPorts, request: RequestContext, project: string) => {
  const { principal: _scope, ...unscoped } = request;
  void _scope;
  const answer = await withRequest({ ...unscoped, interface: 'sql' }, () =>
    ports.sql('SHOW FULL DATABASES', 'mindsdb', {}, new AbortController().signal),
  );
  if (answer.type !== 'table') throw new Error(`SHOW FULL DATABASES failed: ${JSON.stringify(answer)}`);
  const row = answer.data.find((r) => nameKey(String(r[0])) === nameKey(project));
  const quoted = JSON.stringify(project);
  if (!row)
    throw invalid(
      `Switch project=${quoted} names no project (list_databases, or SHOW DATABASES, names them)`,
      'Invalid MCP URL switch',
    );
  if (String(row[1]).toLowerCase() !== 'project')
    throw invalid(
      `Switch project=${quoted} names database ${String(row[0])}, which is not a project (it is ${String(row[1])})`,
      'Invalid MCP URL switch',
    );
  return String(row[0]);
};

/**
 * The switches a new session opens with: its URL's (each a 400 naming it when it is not one),
 * checked to narrow the caller only (a token scoped to another project: 403) and, for `project`,
 * to name a project.
 */
const openingSwitches = async (ports: McpPorts, req: Request, request: RequestContext): Promise<Switches> => {
  const switches = switchesOf(parseSwitches(req.query as Record<string, unknown>));
  narrowPrincipal(request.principal, switches, actorOf({ request }));
  return switches.project === null
    ? switches
    : { ...switches, project: await existingProject(ports, request, switches.project) };
};

/**
 * The switches of an open session, for a request in it: its URL names none, or the same (a
 * session's switches hold for its life: a request naming others is a 400).
 */
const sessionSwitches = (req: Request, opened: Switches | undefined, others: readonly string[] = []) => {
  const switches = opened ?? NO_SWITCHES;
  const given = parseSwitches(req.query as Record<string, unknown>, others);
  if (!sameSwitches(switches, given))
    throw invalid(
      `This session was opened with ${switchesText(switches) || 'no switches'} in its URL; a request in it names ${givenText(given)}: a session's switches hold for its life (open a new session for others)`,
      "MCP URL switches differ from the session's",
    );
  return switches;
};

/** What a new session's server is made of. */
const serverDeps = (door: McpDoor, switches: Switches) => ({
  tools: door.tools,
  calls: door.calls,
  ports: door.ports,
  logger: door.logger,
  switches,
});

/** A new session of the signed-in caller `who`, opened with `switches`. */
const opening = (door: McpDoor, switches: Switches, who: { owner: string; principal: string }) => ({
  deps: serverDeps(door, switches),
  sessions: door.sessions,
  owner: who.owner,
  principal: who.principal,
});

/**
 * Streamable HTTP (MindsDB's `/mcp/` and `/mcp/streamable`): one behaviour at both, for both eras.
 * A request naming a session is the 2025 era's; one carrying the 2026-07-28 envelope is stateless,
 * answered by this node from the log and its read model alone (its caller and switches checked here
 * as a session's are when it opens); anything else opens a session with `initialize`.
 */
const streamable = (door: McpDoor) => async (req: Request, res: Response) => {
  const who = await signedIn(door.ports, req, res);
  if (!who) return;
  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId === 'string') {
    const session = door.sessions.use(sessionId, who.owner);
    if (session) authorize(req, who.request, sessionSwitches(req, session.switches));
    else parseSwitches(req.query as Record<string, unknown>);
    if (!session || !(await transport().requestToStreamableSession(session, req, res)))
      rpcError(res, 404, -32001, 'Session not found: initialize a new one');
    return;
  }
  const switches = await openingSwitches(door.ports, req, who.request);
  if (req.method === 'POST' && (await door.stateless().isStateless(req))) {
    authorize(req, who.request, switches);
    return door.stateless().serve(req, res);
  }
  if (req.method !== 'POST' || !transport().isInitializeRequest(req.body))
    return rpcError(
      res,
      400,
      -32000,
      'No session: POST an initialize request first (the answer names the session in Mcp-Session-Id)',
    );
  authorize(req, who.request, switches);
  await transport().openSession(opening(door, switches, who), req, res);
};

/** The older HTTP+SSE transport (MindsDB's `/mcp/sse`): GET opens the stream, which names where to POST. */
const openSse = (door: McpDoor) => async (req: Request, res: Response) => {
  const who = await signedIn(door.ports, req, res);
  if (!who) return;
  const switches = await openingSwitches(door.ports, req, who.request);
  await transport().openSseSession(opening(door, switches, who), MCP_MESSAGES_PATH, res);
};

const postSseMessage = (door: McpDoor) => async (req: Request, res: Response) => {
  const who = await signedIn(door.ports, req, res);
  if (!who) return;
  const sessionId = req.query.sessionId;
  const session = typeof sessionId === 'string' ? door.sessions.use(sessionId, who.owner) : undefined;
  if (session) authorize(req, who.request, sessionSwitches(req, session.switches, ['sessionId']));
  else parseSwitches(req.query as Record<string, unknown>, ['sessionId']);
  const posted = session
    ? await transport()
        .postToSseSession(session, req, res)
        .catch(() => true)
    : false;
  if (!posted)
    rpcError(res, 404, -32001, 'Session not found: open a new one with GET /mcp/sse (it names the session)');
};

/** A health answer (MindsDB's `/mcp/status`): the same guard as the rest, no session opened. */
const status = (door: McpDoor) => (req: Request, res: Response) => {
  // The tools a connection with these switches would be offered (a bad switch: a 400 naming it).
  const switches = switchesOf(parseSwitches(req.query as Record<string, unknown>));
  const offered = toolsFor(door.tools, switches).offered;
  res.setHeader('Cache-Control', 'no-store');
  res.json({
    status: 'ok',
    service: 'mindledger MCP server',
    version: door.ports.serverVersion,
    // The stateless era's revisions first (no session: any node answers), then the session era's.
    protocol_versions: [
      ...transport().STATELESS_PROTOCOL_VERSIONS,
      ...transport().SUPPORTED_PROTOCOL_VERSIONS,
    ],
    transports: {
      streamable_http: [`${MCP_PATH}/`, MCP_STREAMABLE_PATH],
      sse: { stream: MCP_SSE_PATH, messages: MCP_MESSAGES_PATH },
    },
    tools: offered.length,
    tool_names: offered.map((t) => t.name),
    // The groups `features` takes, each with its tools (the console's Connect AI panel offers them).
    tool_groups: TOOL_GROUPS,
    switches: { read_only: switches.readOnly, project: switches.project, features: switches.features },
    sessions: door.sessions.size(),
  });
};

/** RFC 9728: what this resource is and how a token is sent (tokens come from POST /api/tokens). */
const resourceMetadata = (req: Request, res: Response) => {
  res.json({
    resource: `${originOf(req)}${MCP_PATH}/`,
    resource_name: 'mindledger MCP server',
    bearer_methods_supported: ['header'],
    resource_documentation: `${originOf(req)}/doc`,
  });
};

/** The guard's 401 on /mcp/ (an unknown, expired or revoked token) carries the challenge too. */
const challengeOnUnauthorized: ErrorRequestHandler = (error, req, res, next) => {
  if (isMcpPath(req.path) && isDomainError(error) && error.kind === 'Unauthorized' && !res.headersSent)
    res.setHeader('WWW-Authenticate', challenge(req, req.headers.authorization !== undefined));
  next(error);
};

/**
 * The MCP server at MindsDB's URLs: `/mcp/` and `/mcp/streamable` (Streamable HTTP), `/mcp/sse` with
 * `/mcp/messages` (the older HTTP+SSE transport), `/mcp/status` (health); sessions on both transports: the guard in front of every route has
 * checked the Host (authentication off) or the credentials; here a request without a signed-in
 * caller is refused when authentication is on (the path is outside /api, which the guard leaves
 * open), with the challenge. Each `initialize` opens a session of its own (its server and
 * transport), used only by the caller who opened it.
 */
export const mcpRoutes = (ctx: AppContext, ports: McpPorts, config: Config['mcp'], logger: Logger) => {
  const calls = mcpCallsService(ctx, ports);
  let stateless: Transport.StatelessDoor | undefined;
  const door: McpDoor = {
    ports,
    calls,
    logger,
    tools: mcpTools(ports, calls, { maxRows: config.maxRows, maxChars: config.maxChars }),
    sessions: sessionRegistry({ max: config.maxSessions, idleMs: config.sessionIdleMs }),
    stateless: () =>
      (stateless ??= transport().statelessDoor((switches) => serverDeps(door, switches), logger)),
  };
  const router = express.Router();
  router.all(MCP_PATH, streamable(door));
  router.all(MCP_STREAMABLE_PATH, streamable(door));
  router.get(MCP_SSE_PATH, openSse(door));
  router.post(MCP_MESSAGES_PATH, postSseMessage(door));
  router.get(MCP_STATUS_PATH, status(door));
  router.get(METADATA_PATH, resourceMetadata);
  return { router, challengeOnUnauthorized, sessions: door.sessions };
};
