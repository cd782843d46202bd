import type { MindledgerEvent, RecordedEvent } from '../../events';
import { DomainError, type ErrorKind } from '../../src/shared/errors';

type Event = MindledgerEvent;

/** Gives plain events the metadata the log would: positions 1, 2, … in one stream. */
export const recorded = (events: readonly Event[], stream = 'test', firstPosition = 1n): RecordedEvent[] =>
  events.map((e, i) => ({
    ...e,
    meta: {
      position: firstPosition + BigInt(i),
      stream,
      streamPosition: BigInt(i + 1),
      eventId: `event-${i + 1}`,
      recordedAt: '2026-01-01T00:00:00.000Z',
      schemaVersion: 1,
    },
  }));

/**
 * Given (events) / When (command) / Then (events or an error kind): decider specs read like the
 * business rules and involve no I/O.
 */
export const deciderSpec = <S, C>(decider: {
  initialState: () => S;
  evolve: (state: S, event: RecordedEvent) => S;
  decide: (command: C, state: S) => readonly Event[];
}) => ({
  given: (events: readonly Event[]) => {
    const state = recorded(events).reduce(decider.evolve, decider.initialState());
    return {
      when: (command: C) => ({
        then: (expected: readonly Event[]) => expect(decider.decide(command, state)).toEqual(expected),
        thenThrows: (kind: ErrorKind, detail?: RegExp) => {
          let caught: unknown;
          try {
            decider.decide(command, state);
          } catch (error) {
            caught = error;
          }
          expect(caught).toBeInstanceOf(DomainError);
          expect((caught as DomainError).kind).toBe(kind);
          if (detail) expect((caught as DomainError).detail).toMatch(detail);
        },
      }),
    };
  },
});
