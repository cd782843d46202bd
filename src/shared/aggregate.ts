import type { RecordedEvent } from '../../events';

/**
 * How a stream's events fold into the state its deciders read (the command runner in
 * src/eventlog/commands.ts loads and folds streams with it).
 */
export type Aggregate<S> = {
  readonly initialState: () => S;
  readonly evolve: (state: S, event: RecordedEvent) => S;
};
