/**
 * `table[key]` when `table` has `key` as its own entry, else undefined. A lookup table indexed by
 * what a client sent (a skill's type, a schedule's unit, a file's extension, a USING option) must
 * not find Object's own members: `table['constructor']` is a function and `table['__proto__']` an
 * object, both truthy, and a skill of type `constructor` or a job `every 2 constructor` failed
 * inside the server (500) instead of being taken as free text or refused.
 */
export const ownEntry = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;
