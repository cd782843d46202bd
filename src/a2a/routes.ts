import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { AppContext } from '../context';
import { forbidden, isDomainError, unauthorized } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { agentCard } from './card';
import { agentExecutor } from './executor';
import { checkedHandler } from './handler';
import type { A2aPorts } from './ports';
import {
  AGENT_CARD_PATH,
  AgentCard,
  agentCardHandler,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  jsonRpcHandler,
  type User,
} from './sdk';
import { liveTasks, logTaskStore, taskFromLog, type TaskSnapshots } from './tasks';

/** MindsDB's path for its A2A API, on the HTTP port; each agent at `/a2a/{project}/{agent}/`. */
export const A2A_PATH = '/a2a';
const isA2aPath = (path: string) => /^\/a2a(\/|$)/i.test(path);
const CARD = `/${AGENT_CARD_PATH}`;

const originOf = (req: Request) => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

/** RFC 6750's challenge: a bearer token is what this resource takes. */
const challenge = (invalidToken: boolean) =>
  `Bearer realm="mindledger"${invalidToken ? ', error="invalid_token"' : ''}`;

/** Handlers kept per agent (and version, origin, sign-in): bounded, the oldest dropped first. */
const MAX_AGENTS = 256;

/** Who is asking, as the SDK's `User` (the request context the guard made holds the rest). */
const callerUser = async (): Promise<User> => {
  const request = currentRequest();
  const name = request?.actor ? `${request.actor.kind}:${request.actor.id}` : 'system:unknown';
  const signedIn = request?.principal !== undefined;
  return {
    get isAuthenticated() {
      return signedIn;
    },
    get userName() {
      return name;
    },
  };
};

/**
 * The A2A server: every agent of every project at `/a2a/{project}/{agent}/` (JSON-RPC, v1.0 and
 * v0.3), its card at `/a2a/{project}/{agent}/.well-known/agent-card.json`. The guard in front of
 * every route let the request in (the path is outside /api); here, as for REST's completions, a
 * request without a signed-in caller is refused when sign-in is on (401 with the challenge), and
 * the caller's role and token scope are checked against the agent's project. The SDK's handlers
 * are made per agent and kept (one task store on the log, one set of running tasks for all).
 */
export const a2aRoutes = (ctx: AppContext, ports: A2aPorts, logger: Logger) => {
  const live = liveTasks();
  const snapshots: TaskSnapshots = new Map();
  // Any caller who may ask an agent may follow and cancel its tasks (as any reader lists its runs).
  const buses = new DefaultExecutionEventBusManager(() => 'mindledger');
  const stacks = new Map<string, RequestHandler>();

  const stackFor = async (req: Request, project: string, agentRef: string): Promise<RequestHandler> => {
    const agent = await ports.describeAgent(project, agentRef);
    const authEnabled = await ports.authEnabled();
    const origin = originOf(req);
    const key = JSON.stringify([
      agent.projectId,
      agent.agentId,
      agent.version,
      agent.project,
      agent.name,
      origin,
      authEnabled,
    ]);
    const kept = stacks.get(key);
    if (kept) {
      stacks.delete(key);
      stacks.set(key, kept);
      return kept;
    }
    const url = `${origin}${A2A_PATH}/${encodeURIComponent(agent.project)}/${encodeURIComponent(agent.name)}/`;
    const card = agentCard(agent, url, { authEnabled, serverVersion: ports.serverVersion, origin });
    const agentKey = { projectId: agent.projectId, agentId: agent.agentId };
    const handler = checkedHandler(
      new DefaultRequestHandler(
        card,
        logTaskStore(ctx, agentKey, live, snapshots),
        agentExecutor({ project: agent.project, name: agent.name }, ports, live, logger),
        buses,
      ),
      (taskId) => taskFromLog(ctx, agentKey, taskId),
      (taskId) => live.running.has(taskId),
    );
    const stack = express.Router();
    // The v1.0 card in the protocol's JSON (ProtoJSON: `{"httpAuthSecurityScheme": …}`), which
    // clients in every language read; the SDK's own handler serves v0.3 (no A2A-Version, or 0.x).
    const cardJson = JSON.stringify(AgentCard.toJSON(card));
    stack.get(CARD, (req, res, next) => {
      const version = req.header('A2A-Version');
      if (version === undefined || version === '' || version.startsWith('0.')) return next();
      res.setHeader('Cache-Control', 'no-cache');
      res.append('Vary', 'A2A-Version');
      res.type('application/json').send(cardJson);
    });
    // A card changes with its agent: clients revalidate (ETag) rather than keep it an hour.
    stack.use(
      CARD,
      agentCardHandler({ agentCardProvider: handler, cache: { maxAge: 0 }, legacyCompat: { enabled: true } }),
    );
    stack.use(
      jsonRpcHandler({ requestHandler: handler, userBuilder: callerUser, legacyCompat: { enabled: true } }),
    );
    if (stacks.size >= MAX_AGENTS) stacks.delete(stacks.keys().next().value as string);
    stacks.set(key, stack);
    return stack;
  };

  const router = express.Router();
  router.use(`${A2A_PATH}/:project/:agent`, async (req, res, next) => {
    const params = req.params as { project: string; agent: string };
    const request = currentRequest();
    const principal = request?.principal;
    if (!principal && (await ports.authEnabled())) {
      res.setHeader('WWW-Authenticate', challenge(false));
      throw unauthorized('Authorization is required: send a bearer token (POST /api/tokens makes one)');
    }
    const isCard = (req.method === 'GET' || req.method === 'HEAD') && req.path.toLowerCase() === CARD;
    const refusal = principal
      ? ports.refusal(principal, params.project, params.agent, isCard ? 'read' : 'ask')
      : null;
    if (refusal) throw forbidden(refusal);
    const stack = await stackFor(req, params.project, params.agent);
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
