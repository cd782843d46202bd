import express, { type Request, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { AppContext } from '../context';
import { BoundedMap } from '../shared/boundedMap';
import { actorName, currentRequest } from '../shared/requestContext';
import { agentCard } from './card';
import { agentExecutor } from './executor';
import { checkedHandler } from './handler';
import type { LiveTasks } from './live';
import type { A2aPorts } from './ports';
import {
  AGENT_CARD_PATH,
  AgentCard,
  agentCardHandler,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  jsonRpcHandler,
  ServerCallContext,
  type A2ARequestHandler,
  type User,
} from './sdk';
import { logTaskStore, taskFromLog, type TaskSnapshots } from './tasks';

/** Where an agent's card is, under its base path (the SDK's AGENT_CARD_PATH). */
export const CARD = `/${AGENT_CARD_PATH}`;

const originOf = (req: Request) => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

/** Handlers kept per agent (and version, origin, sign-in): bounded, the oldest dropped first. */
const MAX_AGENTS = 256;

/** Who is asking, as the SDK's `User` (the request context the guard made holds the rest). */
const callerUser = async (): Promise<User> => {
  const request = currentRequest();
  const name = request?.actor ? actorName(request.actor) : 'system:unknown';
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

/** The SDK's call context for a request the routes answer themselves (MindsDB's `POST /a2a/`): its caller. */
export const callContext = async () =>
  new ServerCallContext({ user: await callerUser(), requestedVersion: '0.3' });

/** One agent's handlers: its express stack (JSON-RPC and card), and the request handler under it. */
export type AgentStack = {
  readonly stack: RequestHandler;
  readonly handler: A2ARequestHandler;
  readonly project: string;
  readonly agent: string;
};

/**
 * The SDK's handlers for each agent (JSON-RPC, v1.0 and v0.3, and its card), made on an agent's
 * first request and kept (one task store on the log, one set of running tasks for all). This module
 * and the SDK under it are loaded by the first A2A request (src/a2a/routes.ts), not at start.
 */
export const agentStacks = (
  ctx: AppContext,
  ports: A2aPorts,
  logger: Logger,
  live: LiveTasks,
  /** Where the routes serve agents (`/a2a`): an agent's URL is `{origin}{basePath}/{project}/{agent}/`. */
  basePath: string,
) => {
  const snapshots: TaskSnapshots = new Map();
  // Any caller who may ask an agent may follow and cancel its tasks (as any reader lists its runs).
  const buses = new DefaultExecutionEventBusManager(() => 'mindledger');
  const stacks = new BoundedMap<string, AgentStack>(MAX_AGENTS);

  const stackFor = async (req: Request, project: string, agentRef: string): Promise<AgentStack> => {
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
    const url = `${origin}${basePath}/${encodeURIComponent(agent.project)}/${encodeURIComponent(agent.name)}/`;
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
    const entry: AgentStack = { stack, handler, project: agent.project, agent: agent.name };
    stacks.set(key, entry);
    return entry;
  };

  return stackFor;
};
