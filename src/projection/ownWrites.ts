import type { Duck } from '../duckdb/database';
import type { ReadCache } from '../shared/readCache';

/** The tables an event changes, or `'all'` when that cannot be told before it is applied. */
export type TablesChanged = ReadonlySet<string> | 'all';

/** What a read looks at: some tables by name, or anything (a query, a read through a service). */
export type TablesRead = readonly string[] | 'all';

/**
 * Writes this process answered before its read model applied them: a write whose answer needs
 * nothing from the tables (a project created or deleted) answers once the log has its events. Each
 * is kept, with the tables its events change, until the runner applies it; a read of this process
 * waits for the ones that change what it reads, so nobody reads past a write this process answered.
 */
export class OwnWrites {
  private readonly pending = new Map<bigint, TablesChanged>();

  /** An event this process appended and answered for without waiting for the read model. */
  note(position: bigint, changes: TablesChanged) {
    this.pending.set(position, changes);
  }

  /** The runner applied the event at `position`: reads need not wait for it any more. */
  applied(position: bigint) {
    if (this.pending.size > 0) this.pending.delete(position);
  }

  get size() {
    return this.pending.size;
  }

  /** The positions a read of `tables` must wait for (none, usually). */
  blocking(tables: TablesRead): bigint[] {
    const found: bigint[] = [];
    for (const [position, changed] of this.pending)
      if (tables === 'all' || changed === 'all' || tables.some((t) => changed.has(t))) found.push(position);
    return found;
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
  gated.withReader = (work, options) => {
    const waiting = gate('all');
    return waiting ? waiting.then(() => duck.withReader(work, options)) : duck.withReader(work, options);
  };
  gated.query = (sql, params) => {
    const waiting = gate('all');
    return waiting ? waiting.then(() => duck.query(sql, params)) : duck.query(sql, params);
  };
  return gated;
};

/** A read cache whose every lookup first waits for this process's writes to `tables` answered ahead. */
export const cacheAfterOwnWrites =
  (cached: ReadCache, gate: OwnWritesGate, tables: TablesRead): ReadCache =>
  <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    const waiting = gate(tables);
    return waiting ? waiting.then(() => cached(key, compute)) : cached(key, compute);
  };
