import type { DuckDBConnection } from '@duckdb/node-api';
import type { RecordedEvent } from '../../events';
import type { EventLog } from '../eventlog/types';
import { ProjectionApplyError } from './failures';
import { HistoryRecorder } from './history';
import type { CommittedRows } from './committedRows';
import { BatchRowStore } from './rows';
import type { BatchScope, RowStore, SchemaProjection, TableProjection } from './types';

/** A schema projection's time is counted per table it builds, when the event names one (files do). */
const schemaTimingKey = (p: SchemaProjection, event: RecordedEvent) => {
  const data = event.data as unknown;
  const name = data !== null && typeof data === 'object' && 'name' in data ? String(data.name) : null;
  return name === null ? p.name : `${p.name}: ${name}`;
};

/**
 * Per event type, the indexes of the table projections that handle it, in their order: found once
 * per type in a batch, not by asking each of the ~50 projections about every event.
 */
const tableHandlers = (projections: readonly TableProjection[]) => {
  const found = new Map<RecordedEvent['type'], readonly number[]>();
  return (type: RecordedEvent['type']) => {
    let handlers = found.get(type);
    if (handlers === undefined) {
      handlers = projections.flatMap((p, i) => (p.handles === 'all' || p.handles.includes(type) ? [i] : []));
      found.set(type, handlers);
    }
    return handlers;
  };
};

/** The batch's transaction on the writer connection, begun only when something must run inside it. */
type BatchTransaction = { begin(): Promise<void> };

/** What is left to write once the events are applied, and the stores to tell once committed. */
type AppliedBatch = {
  /** Row changes as SQL text, to run inside the transaction (with the checkpoint, in one call). */
  readonly statements: readonly string[];
  readonly stores: readonly BatchRowStore[];
};

/**
 * Applies a batch of events to every projection that handles them: row changes are kept per table
 * and written at the end. Rows are read outside the transaction until something must write (only
 * the runner writes these tables, so the reads are the same); a schema projection's statements
 * begin it. A small batch's rows come back as SQL text for the caller to run with its checkpoint in
 * one call; a large one's are written here through the appender. A projection that throws is named
 * in the error with the event (the whole batch's rows are written last, so a flush failure names the
 * event only when the batch holds one).
 */
export const applyEvents = async (
  events: readonly RecordedEvent[],
  deps: {
    writer: DuckDBConnection;
    log: EventLog;
    projections: readonly TableProjection[];
    schemaProjections: readonly SchemaProjection[];
    timed: <T>(table: string, work: () => Promise<T> | T) => Promise<T>;
    transaction: BatchTransaction;
    committed?: CommittedRows;
    /** `<position>:<projection>` pairs that projection passes over (PROJECTION_SKIP). */
    skip?: ReadonlySet<string>;
  },
): Promise<AppliedBatch> => {
  const { writer, projections, schemaProjections, timed, transaction } = deps;
  // The position of the event being applied: history-keeping tables note it with each change.
  let position = 0n;
  const flushed = projections.map((p) => new BatchRowStore(p, writer, deps.committed));
  const recorders: HistoryRecorder[] = [];
  const stores: RowStore[] = projections.map((p, i) => {
    if (!p.history) return flushed[i]!;
    if (p.key === null) throw new Error(`${p.table} keeps history but has no key`);
    const recorder = new HistoryRecorder({ ...p, key: p.key }, flushed[i]!, () => position);
    recorders.push(recorder);
    return recorder;
  });
  const byTable = new Map(projections.map((p, i) => [p.table, stores[i]!]));
  const lookup = (table: string) => {
    const store = byTable.get(table);
    if (!store) throw new Error(`No projection writes table ${table}`);
    return store;
  };
  /** One projection's work on the batch, timed under `timingKey`, a failure named with the event. */
  const step = async (
    event: RecordedEvent | null,
    projection: string,
    work: () => unknown,
    timingKey = projection,
  ) => {
    try {
      await timed(timingKey, work);
    } catch (error) {
      throw new ProjectionApplyError(event, projection, error);
    }
  };
  const skipped = (name: string) =>
    deps.skip !== undefined && deps.skip.size > 0 && deps.skip.has(`${position}:${name}`);
  const handlersOf = tableHandlers(projections);
  const scope: BatchScope = {};
  /** The schema projections that applied an event of this batch, each once. */
  const schemaApplied = new Set<SchemaProjection>();
  for (const event of events) {
    position = event.meta.position;
    for (const i of handlersOf(event.type)) {
      const p = projections[i]!;
      if (!skipped(p.table)) await step(event, p.table, () => p.apply(event, stores[i]!, lookup));
    }
    for (const p of schemaProjections)
      if (p.handles.includes(event.type) && !skipped(p.name)) {
        await transaction.begin();
        await step(event, p.name, () => p.apply(event, writer, deps.log, scope), schemaTimingKey(p, event));
        schemaApplied.add(p);
      }
  }
  const only = events.length === 1 ? events[0]! : null;
  for (const p of schemaApplied) if (p.finish) await step(only, p.name, () => p.finish!(writer, scope));
  for (let i = 0; i < projections.length; i++) {
    const p = projections[i]!;
    if (p.finish) await step(only, p.table, () => p.finish!(stores[i]!, lookup));
  }
  for (const recorder of recorders) await step(only, recorder.table, () => recorder.record(lookup));
  const statements: string[] = [];
  const appended = new Set<BatchRowStore>();
  for (const store of flushed) {
    const text = store.flushText();
    if (text) statements.push(...text);
    else appended.add(store);
  }
  if (appended.size > 0) await transaction.begin();
  for (const store of appended) await step(only, store.table, () => store.flush());
  return { statements, stores: flushed };
};
