import type { Logger } from 'pino';
import type { CommandRunner } from '../eventlog/commands';
import type { EventLog } from '../eventlog/types';
import type { Clock } from '../shared/time';
import { resourceKeyPrefix } from './sealing';
import type { SecretVault } from './secretVault';

/**
 * A resource whose secrets are sealed: the stream its events are on, one of its event types, its
 * name. `id`: for a resource that can be renamed (agents, skills, chatbots in a project's stream),
 * its id (the position of its creation; later events carry it as `agentId`, `skillId`…); its
 * secrets are sealed under each name it had, so every one of those is forgotten.
 */
export type SealedResource = {
  readonly stream: string;
  readonly eventType: string;
  readonly name: string;
  readonly id?: number;
};

/** Crypto-shredding (sealedLog.ts): forgets a resource's secrets; answers how many keys it destroyed. */
export type SecretKeeper = { forget(resource: SealedResource, reason: string): Promise<number> };

/** Counts a stream's events: `data-keys-<resource>` streams are only ever appended to. */
const appendOnly = { initialState: () => 0, evolve: (n: number) => n + 1 };

/** The first word of an event type: the kind of resource it is about (as resourceKeyPrefix). */
const kindOf = (eventType: string) => /^[A-Z][a-z0-9]*/.exec(eventType)?.[0] ?? eventType;

/** The field a resource's later events carry its id in: `agentId` for `Agent…` events. */
const idFieldOf = (kind: string) => `${kind.charAt(0).toLowerCase()}${kind.slice(1)}Id`;

/** Every name the resource had, read from its stream: its creation is at position `id`, later events carry the id. */
const namesOf = async (log: EventLog, resource: SealedResource): Promise<string[]> => {
  const names = new Map<string, string>([[resource.name.toLowerCase(), resource.name]]);
  const { id } = resource;
  if (id === undefined) return [...names.values()];
  const kind = kindOf(resource.eventType);
  const field = idFieldOf(kind);
  const { events } = await log.readStream(resource.stream, 0n);
  for (const event of events) {
    if (kindOf(event.type) !== kind) continue;
    const data = event.data as Record<string, unknown>;
    const isIt = event.meta.position === BigInt(id) || data[field] === id;
    if (isIt && typeof data.name === 'string') names.set(data.name.toLowerCase(), data.name);
  }
  return [...names.values()];
};

/**
 * Forgetting a resource's secrets: `DataKeysDestroyed` is appended first (the intent, which the log
 * keeps and auditors see), then the keys are destroyed. A crash between the two leaves keys the log
 * says destroyed: the next forget of the resource destroys them (they are still found by prefix).
 */
export const secretKeeper = (
  ctx: { commands: CommandRunner; log: EventLog; clock: Clock; logger: Logger },
  vault: SecretVault,
): SecretKeeper => ({
  forget: async (sealed, reason) => {
    let count = 0;
    for (const name of await namesOf(ctx.log, sealed)) {
      const prefix = resourceKeyPrefix(sealed.stream, sealed.eventType, name);
      const keyIds = await vault.keysOf(prefix);
      if (keyIds.length === 0) continue;
      const resource = prefix.slice(0, -1);
      await ctx.commands.run(`data-keys-${resource}`, appendOnly, () => [
        {
          type: 'DataKeysDestroyed',
          data: { resource, keyIds, reason, destroyedAt: ctx.clock().toISOString() },
        },
      ]);
      const destroyed = await vault.forgetResource(prefix);
      ctx.logger.info({ resource, keys: destroyed.length }, 'secrets forgotten: data keys destroyed');
      count += destroyed.length;
    }
    return count;
  },
});

/**
 * After a delete sent with `forget`: forgets the secrets of the resource its deletion event names
 * (`AgentDeleted` and the like, carrying the name and `agentId`), under every name it had.
 */
export const forgetDeleted = async (
  secrets: SecretKeeper,
  stream: string,
  deleted: { readonly type: string; readonly data: { readonly name: string } } | undefined,
): Promise<void> => {
  if (!deleted) return;
  const kind = kindOf(deleted.type);
  const id = (deleted.data as Record<string, unknown>)[idFieldOf(kind)];
  await secrets.forget(
    { stream, eventType: deleted.type, name: deleted.data.name, id: typeof id === 'number' ? id : undefined },
    `${kind.toLowerCase()} ${deleted.data.name} deleted with forget`,
  );
};
