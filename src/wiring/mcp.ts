import { AgentRunProblem } from '../agentRuns/service';
import type { AppContext } from '../context';
import { AgentAskFailed, type McpPorts } from '../mcp/ports';
import { currentRequest, withRequest } from '../shared/requestContext';
import { VERSION } from '../shared/version';
import type { SqlService } from '../sql/service';
import type { Services } from './services';

/**
 * The MCP server's ports on the running service: SQL as the SQL endpoint runs it (stamped as SQL
 * in the events it causes), agents' runs as REST's completions run them (recorded on their own
 * streams, `via` mcp), the ledger's proofs and keys, and whether sign-in is on.
 */
export const mcpPorts = (ctx: AppContext, services: Services, sql: SqlService): McpPorts => ({
  sql: (query, db, params, signal) => {
    const request = currentRequest() ?? { requestId: '', interface: 'sql' as const };
    return withRequest({ ...request, interface: 'sql' }, () => sql.execute(query, { db }, params, signal));
  },
  askAgent: async (request, handlers) => {
    const run = await services.agentRuns.prepare({
      project: request.project,
      agent: request.agent,
      messages: [{ role: 'user', content: request.question }],
      via: 'mcp',
    });
    handlers.onStart(run.traceId);
    try {
      return await run.execute({ signal: handlers.signal, onStep: handlers.onStep });
    } catch (error) {
      if (error instanceof AgentRunProblem)
        throw new AgentAskFailed({ traceId: run.traceId, kind: error.runKind, message: error.detail });
      throw error;
    }
  },
  ledger: {
    proof: (position) => services.ledger.inclusion(position),
    trustedKeys: () => [services.ledger.publicKey().pem, ...ctx.config.ledger.trustedKeys],
  },
  authEnabled: () => services.users.enabled(),
  serverVersion: VERSION,
});
