import type { Logger } from 'pino';
import type { CommandRunner } from '../eventlog/commands';
import type { EventLog } from '../eventlog/types';
import type { Clock } from '../shared/time';
import { declaredResource, resourceKeyPrefix, resourceOf } from './resources';
import type { SecretVault } from './secretVault';

/**
 * A resource whose secrets are sealed: the stream its events are on, one of its event types (whose
 * contract declares the resource's kind and id field, events/), its name. `id`: for a resource that
 * can be renamed (agents, skills, chatbots in a project's stream), its id (the position of its
 * creation; later events carry it in the field their contract declares: `agentId`, `skillId`…); its
 * secrets are sealed under each name it had, so every one of those is forgotten.
 */
type SealedResource = {
  readonly stream: string;
  readonly eventType: string;
  readonly name: string;
  readonly id?: number;
};

/** Crypto-shredding (sealedLog.ts): forgets a resource's secrets; answers how many keys it destroyed. */
export type SecretKeeper = { forget(resource: SealedResource, reason: string): Promise<number> };

/** Counts a stream's events: `data-keys-<resource>` streams are only ever appended to. */
const appendOnly = { initialState: () => 0, evolve: (n: number) => n + 1 };

/**
 * Every name the resource had, read from its stream: its creation is at position `id`, later events
 * of its kind carry the id in the field their contract declares.
 */
const namesOf = async (log: EventLog, resource: SealedResource): Promise<string[]> => {
  const names = new Map<string, string>([[resource.name.toLowerCase(), resource.name]]);
  const { id } = resource;
  const { kind, id: field } = resourceOf(resource.eventType);
  if (id === undefined) return [...names.values()];
  const { events } = await log.readStream(resource.stream, 0n);
  for (const event of events) {
    if (declaredResource(event.type)?.kind !== kind) continue;
    const data = event.data as Record<string, unknown>;
    const isIt = event.meta.position === BigInt(id) || (field !== undefined && data[field] === id);
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
    const { kind } = resourceOf(sealed.eventType);
    let count = 0;
    for (const name of await namesOf(ctx.log, sealed)) {
      const prefix = resourceKeyPrefix(sealed.stream, kind, name);
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

/** How a reason names a kind: `knowledge base`, `ML engine`, `agent`. */
const kindLabel = (kind: string) =>
  kind === 'mlEngine' ? 'ML engine' : kind.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/**
 * After a delete sent with `forget`: forgets the secrets of the resource its deletion event names
 * (`AgentDeleted` and the like, carrying the name and the id in the field its contract declares:
 * `agentId`, `kbId`), under every name it had.
 */
export const forgetDeleted = async (
  secrets: SecretKeeper,
  stream: string,
  deleted: { readonly type: string; readonly data: { readonly name: string } } | undefined,
): Promise<void> => {
  if (!deleted) return;
  const { kind, id: field } = resourceOf(deleted.type);
  const id = field === undefined ? undefined : (deleted.data as Record<string, unknown>)[field];
  await secrets.forget(
    { stream, eventType: deleted.type, name: deleted.data.name, id: typeof id === 'number' ? id : undefined },
    `${kindLabel(kind)} ${deleted.data.name} deleted with forget`,
  );
};
