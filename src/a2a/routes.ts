import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { AppContext } from '../context';
import { BoundedMap } from '../shared/boundedMap';
import { forbidden, isDomainError, unauthorized } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { liveTasks } from './live';
import type { A2aPorts } from './ports';
import type * as Mindsdb from './mindsdb';
import type * as Stacks from './stacks';

/** MindsDB's path for its A2A API, on the HTTP port; each agent at `/a2a/{project}/{agent}/`. */
const A2A_PATH = '/a2a';
const isA2aPath = (path: string) => /^\/a2a(\/|$)/i.test(path);
/** An agent's card under its base path: the SDK's AGENT_CARD_PATH (src/a2a/stacks.ts), known here without loading it. */
export const CARD = '/.well-known/agent-card.json';
/** Client task ids remembered (pre-1.0 clients name their tasks). */
const MAX_CLIENT_IDS = 2_000;

/** RFC 6750's challenge: a bearer token is what this resource takes. */
const challenge = (invalidToken: boolean) =>
  `Bearer realm="mindledger"${invalidToken ? ', error="invalid_token"' : ''}`;

/** What `/a2a/` serves, for a client that reads a card first: one skill, any agent by name. */
const serverCard = async (req: Request, ports: A2aPorts) => {
  const origin = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  const authEnabled = await ports.authEnabled();
  return {
    name: 'mindledger agents',
    description:
      'Every agent of this MindsDB-compatible service. Name the agent in each message: metadata.agentName, "my_agent" (project mindsdb) or "project.my_agent". Each agent is also at /a2a/{project}/{agent}/ with its own card.',
    url: `${origin}${A2A_PATH}/`,
    version: ports.serverVersion,
    protocolVersion: '0.3',
    preferredTransport: 'JSONRPC',
    provider: { organization: 'mindledger', url: origin },
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'ask_agent',
        name: 'Ask an agent',
        description:
          'Ask the agent named in message.metadata.agentName a question; the answer is its run (recorded, with its SQL and context).',
        tags: ['agents', 'sql', 'knowledge-bases'],
        examples: ['How many orders were shipped last week?'],
        inputModes: ['text/plain'],
        outputModes: ['text/plain', 'application/json'],
      },
    ],
    ...(authEnabled
      ? {
          securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
          security: [{ bearer: [] }],
        }
      : {}),
  };
};
/** A pre-1.0 client's own task id (named in `tasks/send`), remembered for its later calls, bounded. */
const rememberClientId = (
  clientIds: BoundedMap<string, string>,
  method: string,
  own: unknown,
  taskId: string,
) => {
  if (method !== 'tasks/send' && method !== 'tasks/sendSubscribe') return;
  if (typeof own !== 'string' || own === '' || own.length > 256 || own === taskId) return;
  clientIds.set(own, taskId);
};

/**
 * The A2A server: every agent of every project at `/a2a/{project}/{agent}/` (JSON-RPC, v1.0 and
 * v0.3), its card at `/a2a/{project}/{agent}/.well-known/agent-card.json`. The guard in front of
 * every route let the request in (the path is outside /api); here, as for REST's completions, a
 * request without a signed-in caller is refused when sign-in is on (401 with the challenge), and
 * the caller's role and token scope are checked against the agent's project. The SDK's handlers
 * are made per agent and kept (src/a2a/stacks.ts).
 */
export const a2aRoutes = (ctx: AppContext, ports: A2aPorts, logger: Logger) => {
  const live = liveTasks();
  /** The SDK is loaded by the first request to an agent, not at start (src/a2a/stacks.ts). */
  let stacks: ReturnType<typeof Stacks.agentStacks> | undefined;
  const stackFor = (req: Request, project: string, agent: string) =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (stacks ??= (require('./stacks') as typeof Stacks).agentStacks(ctx, ports, logger, live, A2A_PATH))(
      req,
      project,
      agent,
    );

  const router = express.Router();

  /** The caller, once sign-in (when on) is known to be there; a 401 with the challenge otherwise. */
  const caller = async (res: Response) => {
    const principal = currentRequest()?.principal;
    if (!principal && (await ports.authEnabled())) {
      res.setHeader('WWW-Authenticate', challenge(false));
      throw unauthorized('Authorization is required: send a bearer token (POST /api/tokens makes one)');
    }
    return principal;
  };

  // MindsDB's one A2A endpoint, `POST /a2a/`: the agent named in the message's metadata (agentName).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mindsdb = () => require('./mindsdb') as typeof Mindsdb;
  /** A pre-1.0 client's own task ids (it names its tasks in `tasks/send`) → the run's trace id, bounded. */
  const clientIds = new BoundedMap<string, string>(MAX_CLIENT_IDS);
  const readRun = async (traceId: string) => {
    const { events } = await ctx.log.readStream(`agent-run-${traceId}`, 0n);
    const started = events.find((e) => e.type === 'AgentRunStarted');
    return started?.type === 'AgentRunStarted'
      ? { project: started.data.project, agent: started.data.agent }
      : undefined;
  };
  router.post([A2A_PATH, `${A2A_PATH}/`], async (req, res, next) => {
    const principal = await caller(res);
    const body = (req.body ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
    const method = typeof body.method === 'string' ? body.method : '';
    const params = (body.params !== null && typeof body.params === 'object' ? body.params : {}) as Record<
      string,
      unknown
    >;
    const m = mindsdb();
    const target = await m.agentOfRequest(readRun, method, params, clientIds);
    if ('code' in target) return res.json(m.rpcFailure(body.id, target.code, target.message));
    const refusal = principal ? ports.refusal(principal, target.project, target.agent, 'ask') : null;
    if (refusal) throw forbidden(refusal);
    const agent = await stackFor(req, target.project, target.agent);
    if (target.taskId && params.id !== target.taskId)
      req.body = { ...body, params: { ...params, id: target.taskId } };
    const versioned = (req.header('A2A-Version') ?? '').startsWith('1');
    if ((m.MINDSDB_METHODS as readonly string[]).includes(method) && !versioned)
      return m.answerMindsdb(
        agent,
        method as Mindsdb.MindsdbMethod,
        { id: body.id, params: (req.body as { params: Record<string, unknown> }).params },
        res,
        (taskId) => rememberClientId(clientIds, method, params.id, taskId),
      );
    // The v1.0 and v0.3 methods: the agent's own JSON-RPC handler, as at its URL.
    req.url = '/';
    agent.stack(req, res, next);
  });

  router.get(
    [`${A2A_PATH}/.well-known/agent.json`, `${A2A_PATH}/.well-known/agent-card.json`],
    async (req, res) => {
      await caller(res);
      res.setHeader('Cache-Control', 'no-cache');
      res.json(await serverCard(req, ports));
    },
  );
  router.get(`${A2A_PATH}/status`, async (_req, res) => {
    await caller(res);
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      status: 'ok',
      service: 'mindledger A2A server',
      version: ports.serverVersion,
      protocol_versions: ['1.0', '0.3', 'pre-1.0 (MindsDB: tasks/send, tasks/sendSubscribe)'],
      endpoint: `${A2A_PATH}/`,
      agents: `${A2A_PATH}/{project}/{agent}/`,
      default_project: 'mindsdb',
      tasks_running_here: live.running.size,
    });
  });

  router.use(`${A2A_PATH}/:project/:agent`, async (req, res, next) => {
    const params = req.params as { project: string; agent: string };
    const principal = await caller(res);
    const isCard = (req.method === 'GET' || req.method === 'HEAD') && req.path.toLowerCase() === CARD;
    const refusal = principal
      ? ports.refusal(principal, params.project, params.agent, isCard ? 'read' : 'ask')
      : null;
    if (refusal) throw forbidden(refusal);
    const { stack } = await stackFor(req, params.project, params.agent);
    stack(req, res, next);
  });

  /** The guard's 401 on /a2a/ (an unknown, expired or revoked token) carries the challenge too. */
  const challengeOnUnauthorized: ErrorRequestHandler = (error, req, res, next) => {
    if (isA2aPath(req.path) && isDomainError(error) && error.kind === 'Unauthorized' && !res.headersSent)
      res.setHeader('WWW-Authenticate', challenge(req.headers.authorization !== undefined));
    next(error);
  };

  /** Stops the runs of tasks under way here (the app is closing): each fails `aborted` on its stream. */
  const close = () => {
    for (const controller of live.running.values()) controller.abort('the server is stopping');
  };

  return { router, challengeOnUnauthorized, close };
};
