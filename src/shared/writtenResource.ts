import type { RecordedEvent } from '../../events';

type Recorded<T extends RecordedEvent['type']> = Extract<RecordedEvent, { readonly type: T }>;

const isOf =
  <T extends RecordedEvent['type']>(type: T) =>
  (event: RecordedEvent | undefined): event is Recorded<T> =>
    event?.type === type;

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
  if (isOf(created)(first)) return { created: true, id: first.meta.position };
  if (isOf(updated)(first)) return { created: false, id: BigInt(idOf(first)) };
  return undefined;
};
