import type { AppContext } from '../context';
import { checkConnection } from '../integrations/drivers';
import { invalid } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { isChannelEngine } from './engines';

const driverOptions = (ctx: AppContext) => ({
  connectTimeoutMs: ctx.config.dbConnectTimeoutMs,
  queryTimeoutMs: ctx.config.sqlTimeoutMs,
});

/**
 * Whether a connection with these parameters works. Unless DB_HOST_ALLOWLIST limits the hosts,
 * a failure is reported without the driver's reason (it is logged with the request id): "port
 * closed", "port open" and "that is a MySQL server" must read the same, or registering a
 * database becomes a scanner of the internal network.
 */
export const tryConnection = async (
  ctx: AppContext,
  engine: string,
  parameters: Record<string, unknown>,
): Promise<{ ok: true } | { ok: false; detail: string }> => {
  // Connected to the address that was checked (no second lookup for DNS rebinding to answer).
  const host = await ctx.config.dbHosts.check(String(parameters.host ?? ''));
  const result = await checkConnection(engine, { ...parameters, host }, driverOptions(ctx));
  if (result.ok) return result;
  const where = `${String(parameters.host)}:${String(parameters.port ?? '(default port)')}`;
  const requestId = currentRequest()?.requestId;
  ctx.logger.warn(
    { reqId: requestId, engine, host: parameters.host, port: parameters.port, reason: result.message },
    'external database connection failed',
  );
  if (ctx.config.dbHosts.restricted) return { ok: false, detail: result.message };
  return {
    ok: false,
    detail:
      `could not connect to the ${engine} server at ${where} with these parameters. ` +
      `Unreachable hosts, closed ports, wrong credentials and unknown databases are reported alike here; ` +
      `the server log has the reason${requestId ? ` (request id ${requestId})` : ''}.`,
  };
};

/** Nothing is recorded for a database we cannot reach. */
export const requireReachable = async (
  ctx: AppContext,
  engine: string,
  parameters: Record<string, unknown>,
) => {
  // A chat channel is checked when its chatbot runs (its errors show in the chatbot's last_error);
  // a webhook's URL must be a destination the outbound policy admits (403 now, nothing sent).
  if (isChannelEngine(engine)) {
    if (engine.toLowerCase() === 'webhook' && typeof parameters.url === 'string')
      await ctx.config.outbound.checkUrl(parameters.url, 'Webhook url');
    return;
  }
  const result = await tryConnection(ctx, engine, parameters);
  if (!result.ok) throw invalid(`Can't connect to db: ${result.detail}`, 'Connection error');
};
