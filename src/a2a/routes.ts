import express, { type ErrorRequestHandler, type Request } from 'express';
import type { Logger } from 'pino';
import type { AppContext } from '../context';
import { forbidden, isDomainError, unauthorized } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { liveTasks } from './live';
import type { A2aPorts } from './ports';
import type * as Stacks from './stacks';

/** MindsDB's path for its A2A API, on the HTTP port; each agent at `/a2a/{project}/{agent}/`. */
export const A2A_PATH = '/a2a';
const isA2aPath = (path: string) => /^\/a2a(\/|$)/i.test(path);
/** An agent's card under its base path: the SDK's AGENT_CARD_PATH (src/a2a/stacks.ts), known here without loading it. */
export const CARD = '/.well-known/agent-card.json';

/** RFC 6750's challenge: a bearer token is what this resource takes. */
const challenge = (invalidToken: boolean) =>
  `Bearer realm="mindledger"${invalidToken ? ', error="invalid_token"' : ''}`;

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
