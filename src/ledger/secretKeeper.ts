import type { Logger } from 'pino';
import type { CommandRunner } from '../eventlog/commands';
import type { Clock } from '../shared/time';
import { resourceKeyPrefix } from './sealing';
import type { SecretVault } from './secretVault';

/** A resource whose secrets are sealed: the stream its events are on, one of its event types, its name. */
export type SealedResource = { readonly stream: string; readonly eventType: string; readonly name: string };

/** Crypto-shredding (sealedLog.ts): forgets a resource's secrets; answers how many keys it destroyed. */
export type SecretKeeper = { forget(resource: SealedResource, reason: string): Promise<number> };

/** Counts a stream's events: `data-keys-<resource>` streams are only ever appended to. */
const appendOnly = { initialState: () => 0, evolve: (n: number) => n + 1 };

/**
 * Forgetting a resource's secrets: `DataKeysDestroyed` is appended first (the intent, which the log
 * keeps and auditors see), then the keys are destroyed. A crash between the two leaves keys the log
 * says destroyed: the next forget of the resource destroys them (they are still found by prefix).
 */
export const secretKeeper = (
  ctx: { commands: CommandRunner; clock: Clock; logger: Logger },
  vault: SecretVault,
): SecretKeeper => ({
  forget: async ({ stream, eventType, name }, reason) => {
    const prefix = resourceKeyPrefix(stream, eventType, name);
    const keyIds = await vault.keysOf(prefix);
    if (keyIds.length === 0) return 0;
    const resource = prefix.slice(0, -1);
    await ctx.commands.run(`data-keys-${resource}`, appendOnly, () => [
      {
        type: 'DataKeysDestroyed',
        data: { resource, keyIds, reason, destroyedAt: ctx.clock().toISOString() },
      },
    ]);
    const destroyed = await vault.forgetResource(prefix);
    ctx.logger.info({ resource, keys: destroyed.length }, 'secrets forgotten: data keys destroyed');
    return destroyed.length;
  },
});
