import { allContracts, type MindledgerEvent } from '../../events';
import { allProjections } from '../../projections';
import { recorded } from '../support/decider';
import { allHandled, tableProjection, type RowOf } from '../../src/projection/table';
import type { Row, RowStore } from '../../src/projection/types';

/**
 * A projection's handled-event list and its switch are checked against each other by the compiler
 * (src/projection/table.ts); the `@ts-expect-error` lines below fail `tsc` the day that stops.
 */
const checked = tableProjection({
  table: 'checked',
  key: 'ID',
  columns: [
    { name: 'ID', type: 'BIGINT' },
    { name: 'NAME', type: 'VARCHAR', nullable: true },
    { name: 'STATE', type: 'VARCHAR', values: ['on', 'off'] },
  ],
  handles: ['ProjectCreated', 'ProjectDeleted'],
  apply: (event, rows) => {
    switch (event.type) {
      case 'ProjectCreated':
        rows.put({ ID: event.meta.position, NAME: event.data.name, STATE: 'on' });
        return;
      case 'ProjectDeleted':
        rows.delete(BigInt(event.data.projectId));
        return;
      default:
        return allHandled(event);
    }
  },
});

tableProjection({
  table: 'a_case_not_listed',
  key: null,
  columns: [],
  handles: ['ProjectCreated'],
  apply: (event) => {
    switch (event.type) {
      // @ts-expect-error: a case for an event the list does not name does not compile
      case 'ProjectDeleted':
        return;
    }
  },
});

tableProjection({
  table: 'a_listed_type_without_case',
  key: null,
  columns: [],
  handles: ['ProjectCreated', 'ProjectDeleted'],
  apply: (event) => {
    switch (event.type) {
      case 'ProjectCreated':
        return;
      default:
        // @ts-expect-error: a listed type without its case reaches the default, which does not compile
        return allHandled(event);
    }
  },
});

tableProjection({
  table: 'bad_key',
  // @ts-expect-error: the key is one of the columns
  key: 'NOPE',
  columns: [{ name: 'ID', type: 'BIGINT' }],
  handles: [],
  apply: () => undefined,
});

type CheckedRow = RowOf<typeof checked.columns>;
const typed: CheckedRow = { ID: 1n, NAME: null, STATE: 'off' };
// @ts-expect-error: a column with values is typed by them; one without `nullable` holds no null
const wrong: CheckedRow = { ID: null, NAME: 'x', STATE: 'maybe' };
void [typed, wrong];

const memory = () => {
  const rows = new Map<string, Row>();
  const store: RowStore = {
    get: async (key) => rows.get(String(key)),
    put: (row) => void rows.set(String(row.ID), row),
    insert: (row) => void rows.set(String(row.ID), row),
    delete: (key) => void rows.delete(String(key)),
    scan: async (where, filter = () => true) =>
      [...rows.values()].filter(
        (row) => Object.entries(where).every(([k, v]) => row[k] === v) && filter(row),
      ),
  };
  return { rows, store };
};

const created: MindledgerEvent = {
  type: 'ProjectCreated',
  data: { name: 'p', createdAt: '2024-01-01T00:00:00.000Z' },
};

describe('handled-event lists', () => {
  it('every table projection lists contract types, each once', () => {
    const known = new Set<string>(allContracts.map((c) => c.type));
    for (const p of allProjections) {
      if (p.handles === 'all') continue;
      expect({ table: p.table, unknown: p.handles.filter((t) => !known.has(t)) }).toEqual({
        table: p.table,
        unknown: [],
      });
      expect(new Set(p.handles).size).toBe(p.handles.length);
    }
  });

  it('a projection is given only the events it lists: others change no row', async () => {
    const { rows, store } = memory();
    const [event] = recorded([created]);
    await checked.apply(event!, store, () => store);
    expect(rows.size).toBe(1);
    const other = { ...event!, type: 'SkillCreated' } as unknown as typeof event;
    await checked.apply(other!, store, () => store);
    expect(rows.size).toBe(1);
  });
});
