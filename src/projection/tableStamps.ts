import type { EventType, RecordedEvent } from '../../events';
import { historyTableOf, versionsTableOf } from './history';
import type { TablesChanged } from './ownWrites';
import { ReadVersions } from './readVersions';
import type { BatchRowStore } from './rows';
import type { SchemaProjection, TableProjection } from './types';

/**
 * The read model's versions, moved by every committed batch: one for the whole (read caches key
 * on it), one per table, and the stamps answers are keyed on (see readVersions.ts). Dropping the
 * tables moves every one of them.
 */
export class TableStamps {
  private batches = 0;
  /** Per table, increases with every batch that wrote or deleted a row of it (`tableVersion`). */
  private readonly tableVersions = new Map<string, number>();
  /** Increases when the tables are dropped: every table's version moves with it. */
  private generation = 0;
  private readonly tablesByEventType = new Map<string, TablesChanged>();
  /** What each answer read from the tables is stamped with (see readVersions.ts). */
  private readonly readVersions: ReadVersions;

  constructor(
    private readonly projections: readonly TableProjection[],
    private readonly schemaProjections: readonly SchemaProjection[],
  ) {
    this.readVersions = new ReadVersions(
      new Set(
        projections
          .filter((p) => p.activity || p.handles === 'all')
          .flatMap((p) =>
            p.history ? [p.table, versionsTableOf(p.table), historyTableOf(p.table)] : [p.table],
          ),
      ),
      (table) => this.tableVersion(table),
    );
  }

  /** Increases with every applied batch; read caches key on it. */
  get version(): number {
    return this.batches;
  }

  /** See `ProjectionRunner.tableVersion`. */
  tableVersion(table: string): number {
    return this.generation * 2 ** 32 + (this.tableVersions.get(table) ?? 0);
  }

  /** See `ProjectionRunner.readStamp`. */
  readStamp(reads: readonly string[]): string {
    return this.readVersions.stamp(this.generation, reads);
  }

  /** See `ProjectionRunner.readStampsNow`. */
  readStampsNow(): (reads: readonly string[]) => string {
    return this.readVersions.snapshot(this.generation);
  }

  /** See `ProjectionRunner.resourceVersion`. */
  get resourceVersion(): number {
    return this.generation * 2 ** 32 + this.readVersions.resourceCount;
  }

  get activityTables(): ReadonlySet<string> {
    return this.readVersions.activityTables;
  }

  /** A batch of `events` committed, having written `stores`. */
  batchApplied(stores: readonly BatchRowStore[], events: readonly RecordedEvent[]) {
    this.batches++;
    for (const store of stores)
      if (store.changed) this.tableVersions.set(store.table, (this.tableVersions.get(store.table) ?? 0) + 1);
    // A resource table changed: rows written to one (a projection may write another's table), or
    // an event whose tables are not known by name (a file's, a knowledge base's).
    const activity = this.readVersions.activityTables;
    this.readVersions.applied(
      stores.some((s) => s.changed && !activity.has(s.table)) ||
        events.some((e) => this.tablesChangedBy(e.type) === 'all'),
    );
  }

  /** The tables were dropped. */
  dropped() {
    this.generation++;
  }

  /** The tables an event of this type changes; a schema projection's tables are not known by name. */
  tablesChangedBy(eventType: EventType): TablesChanged {
    let tables = this.tablesByEventType.get(eventType);
    if (tables) return tables;
    const names = new Set<string>();
    for (const p of this.projections)
      if (p.handles === 'all' || p.handles.includes(eventType)) {
        names.add(p.table);
        if (p.history) names.add(versionsTableOf(p.table)).add(historyTableOf(p.table));
      }
    const schemaChanging = this.schemaProjections.some((p) => p.handles.includes(eventType));
    tables = schemaChanging ? 'all' : names;
    this.tablesByEventType.set(eventType, tables);
    return tables;
  }
}
