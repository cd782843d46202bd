import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';

/** The stream recording one external database's writes (never a project's: writes are many). */
export const integrationWritesStream = (database: string) => `database-writes-${database.toLowerCase()}`;

/** How many writes a database's stream holds: nothing is decided on more. */
export type IntegrationWritesState = { readonly writes: number };

export const integrationWritesAggregate: Aggregate<IntegrationWritesState> = {
  initialState: () => ({ writes: 0 }),
  evolve: (state, event: RecordedEvent) =>
    event.type === 'IntegrationTableWritten' ? { writes: state.writes + 1 } : state,
};
