import { auditLedger } from '../audit/ledger';
import type { AppContext } from '../context';
import { loadOrCreateSigningKey } from '../ledger';

/**
 * The audit ledger with this process's signing key. The key is loaded (or created) here, once, and
 * it is always among the trusted keys: checkpoints this process signs must verify against itself.
 */
export const signedLedger = (ctx: AppContext) => {
  const signingKey = loadOrCreateSigningKey(ctx.config.ledger.signingKey);
  for (const warning of signingKey.warnings) ctx.logger.warn(warning);
  return auditLedger(ctx, {
    key: signingKey,
    trusted: [signingKey.publicKey, ...ctx.config.ledger.trustedKeys],
    origin: ctx.config.ledger.origin,
    everyEvents: ctx.config.ledger.everyEvents,
    everyMs: ctx.config.ledger.everyMs,
    onStop: ctx.config.ledger.onStop,
    witnessDir: ctx.config.ledger.witnessDir,
  });
};
