import { keepMaskedSecrets, requireSecretsForNewDestination } from './secrets';

export type Params = Record<string, unknown>;

/**
 * MindsDB's PUT semantics for `params`: keys sent replace stored ones, a key sent as `null` is
 * removed, keys not sent stay. A secret echoed back as "******" keeps its stored value, unless the
 * patch changes where secrets go (a base URL, a host, a provider): then they must be sent again.
 */
export const mergeParams = (stored: Params, patch: Params): Params => {
  const incoming = keepMaskedSecrets(patch, stored);
  const merged: Params = { ...stored };
  for (const [k, v] of Object.entries(incoming)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  requireSecretsForNewDestination(patch, stored, merged);
  return merged;
};

type Identified = { id: bigint | number; name: string };

/**
 * A reference to a resource by numeric id or by name (case-insensitive); an id wins over a name
 * that happens to be digits. `identify` reaches the id and name of items that wrap them.
 */
export function findByRef<T extends Identified>(items: Iterable<T>, ref: string | number): T | undefined;
export function findByRef<T>(
  items: Iterable<T>,
  ref: string | number,
  identify: (item: T) => Identified,
): T | undefined;
export function findByRef<T>(
  items: Iterable<T>,
  ref: string | number,
  identify: (item: T) => Identified = (item) => item as Identified,
): T | undefined {
  const all = [...items];
  if (typeof ref === 'number' || /^\d+$/.test(ref)) {
    const id = BigInt(ref);
    const byId = all.find((i) => BigInt(identify(i).id) === id);
    if (byId) return byId;
  }
  const key = String(ref).toLowerCase();
  return all.find((i) => identify(i).name.toLowerCase() === key);
}

export const findByName = <T extends { name: string }>(items: Iterable<T>, name: string): T | undefined => {
  const key = name.toLowerCase();
  for (const i of items) if (i.name.toLowerCase() === key) return i;
  return undefined;
};

/** A command as routes build it: the service stamps the time from the injected clock. */
export type Unstamped<C> = C extends unknown ? Omit<C, 'metadata'> : never;
