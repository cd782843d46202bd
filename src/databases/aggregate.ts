import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';
import { evolveDatabase, initialDatabaseState, type DatabaseState } from './decider';

export const databaseAggregate: Aggregate<DatabaseState> = {
  initialState: initialDatabaseState,
  evolve: evolveDatabase,
};

/** One stream per integration name: the stream itself keeps names unique. */
export const databaseStream = (name: string) => `database-${nameKey(name)}`;
