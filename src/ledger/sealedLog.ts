import type { RecordedEvent } from '../../events';
import type { AppendResult, EventLog, NewEvent } from '../eventlog/types';
import type { DataKey } from './envelope';
import type { SecretVault } from './secretVault';
import { eventKeyPrefix } from './resources';
import { holdsPlainSecrets, sealingKeyIds, sealSecrets, unsealSecrets } from './sealing';

/**
 * The event log with secrets sealed on their way in (crypto-shredding, docs/security.md): each event that
 * holds a secret is appended with it encrypted under its resource's data key, which lives outside
 * the log; destroying that key forgets the secret in every copy of the log while every event, and
 * so the ledger's tree, stays as it was.
 *
 * Who reads what:
 * - `readStream` unseals: the deciders, and the services that need a secret (a connection's
 *   password, a provider's key), load a stream's state from it. A forgotten secret reads FORGOTTEN.
 * - `readAll` and `readPage` give the log as stored: the projections mask secrets anyway (and the
 *   mask of sealed data is the mask of the plain data, so a rebuild equals the live read model), and
 *   the ledger hashes and audits exactly what is stored.
 * - `append` answers the appended events unsealed, as `readStream` would give them, for the command
 *   runner's cached states.
 */
export const withSealedSecrets = (log: EventLog, vault: SecretVault): EventLog => {
  const unsealAll = async (events: readonly RecordedEvent[]): Promise<RecordedEvent[]> => {
    const kids = new Set<string>();
    for (const e of events) for (const kid of sealingKeyIds(e.data)) kids.add(kid);
    if (kids.size === 0) return [...events];
    const keys = await vault.openKeys(kids);
    return events.map((e) => {
      const data = unsealSecrets(e.data, keys);
      return data === e.data ? e : ({ ...e, data } as RecordedEvent);
    });
  };

  return {
    kind: log.kind,
    soleWriter: log.soleWriter,
    readStream: async (stream, afterVersion) => {
      const read = await log.readStream(stream, afterVersion);
      return { events: await unsealAll(read.events), version: read.version };
    },
    append: async (stream, events, expectedVersion, causes): Promise<AppendResult> => {
      const used = new Map<string, DataKey>();
      const sealed: NewEvent[] = [];
      for (const event of events) {
        if (!holdsPlainSecrets(event.data)) {
          sealed.push(event);
          continue;
        }
        // The resource the event's contract declares (events/): its forget destroys this key.
        const key = await vault.keyForResource(eventKeyPrefix(stream, event));
        used.set(key.kid, key);
        sealed.push({ ...event, data: sealSecrets(event.data, key) } as NewEvent);
      }
      const result = await log.append(stream, sealed, expectedVersion, causes);
      if (used.size === 0 && !result.events.some((e) => sealingKeyIds(e.data).size > 0)) return result;
      // The keys just used open what was just sealed; copied sealed values need theirs from the store.
      const missing = new Set<string>();
      for (const e of result.events)
        for (const kid of sealingKeyIds(e.data)) if (!used.has(kid)) missing.add(kid);
      const keys = new Map([...used, ...(missing.size > 0 ? await vault.openKeys(missing) : [])]);
      return {
        ...result,
        events: result.events.map((e) => ({ ...e, data: unsealSecrets(e.data, keys) }) as RecordedEvent),
      };
    },
    readAll: (after, limit) => log.readAll(after, limit),
    head: () => log.head(),
    eventAt: (position) => log.eventAt(position),
    eventIdAt: (position) => log.eventIdAt(position),
    readPage: (options) => log.readPage(options),
    exclusive: (stream, work) => log.exclusive(stream, work),
    follow: (listener) => log.follow(listener),
    unreadFloor: (cursor) => log.unreadFloor(cursor),
    close: () => log.close(),
  };
};

/** Whether a stored event holds sealed secrets: a cached state must then be re-read, unsealed. */
export const holdsSealedSecrets = (event: RecordedEvent): boolean => sealingKeyIds(event.data).size > 0;
