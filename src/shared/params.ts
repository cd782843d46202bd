import { keepMaskedSecrets } from './secrets';

export type Params = Record<string, unknown>;

/**
 * MindsDB's PUT semantics for `params`: keys sent replace stored ones, a key sent as `null` is
 * removed, keys not sent stay. A secret echoed back as "******" keeps its stored value.
 */
export const mergeParams = (stored: Params, patch: Params): Params => {
  const incoming = keepMaskedSecrets(patch, stored);
  const merged: Params = { ...stored };
  for (const [k, v] of Object.entries(incoming)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return merged;
};

/** A reference to a resource by name (case-insensitive) or by numeric id. */
export const findByRef = <T extends { id: bigint; name: string }>(
  items: Iterable<T>,
  ref: string | number,
): T | undefined => {
  const all = [...items];
  if (typeof ref === 'number' || /^\d+$/.test(ref)) {
    const byId = all.find((i) => i.id === BigInt(ref));
    if (byId) return byId;
  }
  const key = String(ref).toLowerCase();
  return all.find((i) => i.name.toLowerCase() === key);
};

export const findByName = <T extends { name: string }>(items: Iterable<T>, name: string): T | undefined => {
  const key = name.toLowerCase();
  for (const i of items) if (i.name.toLowerCase() === key) return i;
  return undefined;
};

/** A command as routes build it: the service stamps the time from the injected clock. */
export type Unstamped<C> = C extends unknown ? Omit<C, 'metadata'> : never;
