import { AsyncLocalStorage } from 'node:async_hooks';
import type { Duck } from '../duckdb/database';
import type { ReadCache } from '../shared/readCache';

/** The tables an event changes, or `'all'` when that cannot be told before it is applied. */
export type TablesChanged = ReadonlySet<string> | 'all';

/**
 * What a read looks at: some tables by name, every table but some (an answer that reads no activity
 * table but one, readVersions.ts), or anything (a query, a read through a service).
 */
export type TablesRead = readonly string[] | { readonly allBut: ReadonlySet<string> } | 'all';

/**
 * Writes this process answered before its read model applied them: a write whose answer needs
 * nothing from the tables (a project created or deleted) answers once the log has its events. Each
 * is kept, with the tables its events change, until the runner applies it; a read of this process
 * waits for the ones that change what it reads, so nobody reads past a write this process answered.
 */
export class OwnWrites {
  private readonly pending = new Map<bigint, TablesChanged>();
  /** The pending positions by table they change (`'all'`: by none known by name), so a read of one table does not look at every write pending. */
  private readonly byTable = new Map<string, Set<bigint>>();
  private readonly changingAny = new Set<bigint>();

  /** An event this process appended and answered for without waiting for the read model. */
  note(position: bigint, changes: TablesChanged) {
    this.pending.set(position, changes);
    if (changes === 'all') this.changingAny.add(position);
    else
      for (const table of changes) {
        let positions = this.byTable.get(table);
        if (!positions) this.byTable.set(table, (positions = new Set()));
        positions.add(position);
      }
  }

  /** The runner applied the event at `position`: reads need not wait for it any more. */
  applied(position: bigint) {
    const changes = this.pending.get(position);
    if (changes === undefined) return;
    this.pending.delete(position);
    if (changes === 'all') this.changingAny.delete(position);
    else
      for (const table of changes) {
        const positions = this.byTable.get(table);
        positions?.delete(position);
        if (positions?.size === 0) this.byTable.delete(table);
      }
  }

  get size() {
    return this.pending.size;
  }

  /** The positions a read of `tables` must wait for (none, usually), in no particular order. */
  blocking(tables: TablesRead): bigint[] {
    if (this.pending.size === 0) return [];
    if (tables === 'all') return [...this.pending.keys()];
    if ('allBut' in tables) {
      const { allBut } = tables;
      return [...this.pending]
        .filter(([, changes]) => changes === 'all' || [...changes].some((table) => !allBut.has(table)))
        .map(([position]) => position);
    }
    const found = new Set(this.changingAny);
    for (const table of tables) for (const position of this.byTable.get(table) ?? []) found.add(position);
    return [...found];
  }
}

/** Waits for the writes a read must see (`ProjectionRunner.ownWritesApplied` with the wait bound in). */
export type OwnWritesGate = (tables: TablesRead) => Promise<void> | undefined;

/**
 * The read model's connections, with every read first waiting for this process's writes answered
 * ahead: a read through a service cannot name its tables, so it waits for any of them.
 */
export const readsAfterOwnWrites = (duck: Duck, gate: OwnWritesGate): Duck => {
  const gated = Object.create(duck) as Duck & Pick<Duck, 'withReader' | 'query'>;
  const waitFirst = () => (readingTablesWaitedFor.getStore() ? undefined : gate('all'));
  gated.withReader = (work, options) => {
    const waiting = waitFirst();
    return waiting ? waiting.then(() => duck.withReader(work, options)) : duck.withReader(work, options);
  };
  gated.query = (sql, params) => {
    const waiting = waitFirst();
    return waiting ? waiting.then(() => duck.query(sql, params)) : duck.query(sql, params);
  };
  return gated;
};

/** Set while a value read from named tables alone is computed: the wait for them is done. */
const readingTablesWaitedFor = new AsyncLocalStorage<true>();

/**
 * A read cache whose every lookup first waits for this process's writes to `tables` answered ahead.
 * A value of such a cache is read from those tables alone (`cachedOf`), so computing it waits for
 * nothing more: a project create's check of the integrations' names does not wait for other
 * projects' creates still on their way to the read model.
 */
export const cacheAfterOwnWrites =
  (cached: ReadCache, gate: OwnWritesGate, tables: TablesRead): ReadCache =>
  <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    const waiting = gate(tables);
    const scoped = tables === 'all' ? compute : () => readingTablesWaitedFor.run(true, compute);
    return waiting ? waiting.then(() => cached(key, scoped)) : cached(key, scoped);
  };

/** `cacheAfterOwnWrites` for each table's cache, made once per table. */
export const tableCachesAfterOwnWrites = (
  cacheOf: (table: string) => ReadCache,
  gate: OwnWritesGate,
): ((table: string) => ReadCache) => {
  const made = new Map<string, ReadCache>();
  return (table) => {
    let cache = made.get(table);
    if (!cache) made.set(table, (cache = cacheAfterOwnWrites(cacheOf(table), gate, [table])));
    return cache;
  };
};
