import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';

/** A registered integration (an external data source) as its stream knows it. */
export type DatabaseState =
  | { status: 'none' }
  | {
      status: 'live';
      id: bigint;
      name: string;
      engine: string;
      parameters: Record<string, unknown>;
      createdAt: string;
      updatedAt: string;
      version: bigint;
    }
  | { status: 'deleted'; name: string };

export const initialDatabaseState = (): DatabaseState => ({ status: 'none' });

export const evolveDatabase = (state: DatabaseState, event: RecordedEvent): DatabaseState => {
  switch (event.type) {
    case 'DatabaseCreated': {
      const d = event.data;
      return {
        status: 'live',
        id: event.meta.position,
        name: d.name,
        engine: d.engine,
        parameters: d.parameters,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        version: event.meta.position,
      };
    }
    case 'DatabaseUpdated': {
      if (state.status !== 'live') return state;
      const d = event.data;
      return {
        ...state,
        engine: d.engine,
        parameters: d.parameters,
        updatedAt: d.updatedAt,
        version: event.meta.position,
      };
    }
    case 'DatabaseDeleted':
      return { status: 'deleted', name: event.data.name };
    default:
      return state;
  }
};

export const databaseAggregate: Aggregate<DatabaseState> = {
  initialState: initialDatabaseState,
  evolve: evolveDatabase,
};

/** One stream per integration name: the stream itself keeps names unique. */
export const databaseStream = (name: string) => `database-${nameKey(name)}`;
