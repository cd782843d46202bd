import type { MindledgerEvent, RecordedEvent } from '../../events';
import { notFound } from './errors';
import { findByName } from './params';
import { defineProjectSlice, type ProjectRef } from './projectState';

/**
 * A project's resources of one kind (its agents, its jobs, …) by id, the log position of the event
 * that created each. A change copies the map: a project holds tens of them (the skills, which a
 * project may hold thousands of, keep persistent maps instead).
 */
export type ResourcesById<T> = ReadonlyMap<bigint, T>;

/** `items` with `item` put under its id. */
export const withResource = <T extends { readonly id: bigint }>(
  items: ResourcesById<T>,
  item: T,
): ResourcesById<T> => new Map(items).set(item.id, item);

/** `items` with the one of id `id` changed; as they are when it is gone (an event after its deletion). */
export const changeResource = <T extends { readonly id: bigint }>(
  items: ResourcesById<T>,
  id: number,
  change: (current: T) => T,
): ResourcesById<T> => {
  const current = items.get(BigInt(id));
  return current ? withResource(items, change(current)) : items;
};

export const withoutResource = <T>(items: ResourcesById<T>, id: number): ResourcesById<T> => {
  const next = new Map(items);
  next.delete(BigInt(id));
  return next;
};

/**
 * What a versioned resource holds besides its own fields: when it was made and last changed, and
 * its version, the log position of the last event that changed it (its ETag).
 */
export type Versioned = { readonly createdAt: string; readonly updatedAt: string; readonly version: bigint };

type Positioned = { readonly meta: { readonly position: bigint } };

/** A versioned resource as the event creating it makes it: its id and version that event's position. */
export const firstVersion = <T extends object>(event: Positioned, createdAt: string, fields: T) => ({
  id: event.meta.position,
  ...fields,
  createdAt,
  updatedAt: createdAt,
  version: event.meta.position,
});

/** `current` as a later `event` changes it, at `at`: its version that event's position. */
export const nextVersion = <T extends Versioned>(
  current: T,
  event: Positioned,
  at: string,
  changes: Partial<T>,
): T => ({ ...current, ...changes, updatedAt: at, version: event.meta.position });

/** The resource a client referred to as `ref`, or the 404 saying that no `kind` is named so. */
export const orNotFound = <T>(resource: T | undefined, kind: string, ref: string): T => {
  if (!resource) throw notFound(`${kind} with name ${ref} does not exist`, `${kind} not found`);
  return resource;
};

/** The resource named `name` (case-insensitive, as MindsDB's names), or a 404 naming it. */
export const requireNamed = <T extends { readonly name: string }>(
  items: ReadonlyMap<unknown, T>,
  name: string,
  kind: string,
): T => orNotFound(findByName(items.values(), name), kind, name);

/** A slice's cascade: the event deleting each resource it holds, in the order it holds them. */
export const deletingEach =
  <T, E extends MindledgerEvent>(deleted: (item: T, project: ProjectRef, at: string) => E) =>
  (items: ReadonlyMap<unknown, T>, project: ProjectRef, at: string): E[] =>
    [...items.values()].map((item) => deleted(item, project, at));

/** A project slice whose state is its resources by id: empty at first, emptied by the cascade. */
export const defineResourcesSlice = <Key extends string, T>(
  key: Key,
  evolve: (items: ResourcesById<T>, event: RecordedEvent) => ResourcesById<T>,
  deleted: (item: T, project: ProjectRef, at: string) => MindledgerEvent,
) =>
  defineProjectSlice({
    key,
    initial: (): ResourcesById<T> => new Map(),
    evolve,
    cascade: deletingEach(deleted),
  });
