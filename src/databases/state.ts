import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';
import { firstVersion, nextVersion, type Versioned } from '../shared/resourceState';

/** A registered integration (an external data source) as its stream knows it. */
export type DatabaseState =
  | { status: 'none' }
  | ({
      status: 'live';
      id: bigint;
      name: string;
      engine: string;
      parameters: Record<string, unknown>;
    } & Versioned)
  | { status: 'deleted'; name: string };

export const initialDatabaseState = (): DatabaseState => ({ status: 'none' });

export const evolveDatabase = (state: DatabaseState, event: RecordedEvent): DatabaseState => {
  switch (event.type) {
    case 'DatabaseCreated': {
      const { name, engine, parameters, createdAt } = event.data;
      return { status: 'live', ...firstVersion(event, createdAt, { name, engine, parameters }) };
    }
    case 'DatabaseUpdated': {
      if (state.status !== 'live') return state;
      const { engine, parameters, updatedAt } = event.data;
      return nextVersion(state, event, updatedAt, { engine, parameters });
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
