import type { RecordedEvent } from '../../events';

type Recorded<T extends RecordedEvent['type']> = Extract<RecordedEvent, { readonly type: T }>;

const is = <T extends RecordedEvent['type']>(
  event: RecordedEvent | undefined,
  type: T,
): event is Recorded<T> => event?.type === type;

/**
 * The project resource a write made or changed, told by the first event it appended: its creation
 * (the resource's id is that event's position) or its update (`idOf`: the id the event names). None
 * for a delete, or a write that changed nothing.
 */
export const writtenResource = <C extends RecordedEvent['type'], U extends RecordedEvent['type']>(
  events: readonly RecordedEvent[],
  [created, updated]: readonly [C, U],
  idOf: (event: Recorded<U>) => number,
): { readonly created: boolean; readonly id: bigint } | undefined => {
  const [first] = events;
  if (is(first, created)) return { created: true, id: first.meta.position };
  if (is(first, updated)) return { created: false, id: BigInt(idOf(first)) };
  return undefined;
};
