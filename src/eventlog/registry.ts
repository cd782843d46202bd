import { allContracts, type AnyRecordedEvent, type EventContract, type EventMeta } from '../../events';
import type { NewEvent } from './types';

const byType = new Map<string, EventContract>(allContracts.map((c) => [c.type, c]));

export const contractOf = (type: string): EventContract => {
  const contract = byType.get(type);
  if (!contract) throw new Error(`Event type ${type} is not part of the contract (events/index.ts)`);
  return contract;
};

/** Metadata we store with every event besides what the store itself records. */
export type StoredMetadata = { recordedAt: string; schemaVersion: number };

/** Validates an outgoing event against its contract: a decider can never write a malformed event. */
export const prepareForAppend = (event: NewEvent, now: Date): NewEvent & { metadata: StoredMetadata } => {
  const contract = contractOf(event.type);
  const data = contract.schema.parse(event.data);
  return {
    type: event.type,
    data,
    metadata: { recordedAt: now.toISOString(), schemaVersion: contract.version },
  };
};

/** Brings a stored event up to the current contract version. */
export const upcast = (
  type: string,
  data: unknown,
  meta: Omit<EventMeta, 'schemaVersion'> & { schemaVersion?: number },
): AnyRecordedEvent => {
  const contract = byType.get(type);
  const stored = meta.schemaVersion ?? 1;
  let current = data;
  if (contract) {
    for (let v = stored; v < contract.version; v++) {
      const step = contract.upcasters[v];
      if (!step) throw new Error(`No upcaster for ${type} from version ${v} to ${v + 1}`);
      current = step(current);
    }
  }
  return { type, data: current, meta: { ...meta, schemaVersion: stored } };
};
