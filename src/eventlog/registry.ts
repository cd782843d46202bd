import crypto from 'node:crypto';
import { currentRequest, type RequestContext } from '../shared/requestContext';
import {
  allContracts,
  type AnyRecordedEvent,
  type EventContract,
  type EventMeta,
  type RecordedEvent,
} from '../../events';

/** Metadata we store with every event besides what the store itself records. */
export type StoredMetadata = {
  recordedAt: string;
  schemaVersion: number;
  /** Who, by which request and interface (the request being served when it was appended). */
  actor?: string;
  requestId?: string;
  via?: string;
};

/** The actor metadata of an event: from the request that caused it, if any. */
const actorMetadata = (
  request: RequestContext | undefined,
): Pick<StoredMetadata, 'actor' | 'requestId' | 'via'> => {
  if (!request) return {};
  return {
    ...(request.actor ? { actor: `${request.actor.kind}:${request.actor.id}` } : {}),
    ...(request.requestId ? { requestId: request.requestId } : {}),
    via: request.interface,
  };
};

/** The actor fields of stored metadata, for the event's `meta` (absent ones left out). */
export const actorOf = (m: Partial<StoredMetadata> | null | undefined) => ({
  ...(m?.actor !== undefined ? { actor: m.actor } : {}),
  ...(m?.requestId !== undefined ? { requestId: m.requestId } : {}),
  ...(m?.via !== undefined ? { via: m.via } : {}),
});

/** What we hand to Emmett: our own event id, so we know it without reading the event back. */
export type OutgoingMetadata = StoredMetadata & { messageId: string };

type MetaWithoutVersion = Omit<EventMeta, 'schemaVersion'> & { schemaVersion?: number };

/** The contract as code: validates what is written and upcasts what is read. */
export const contractRegistry = (contracts: readonly EventContract[]) => {
  const byType = new Map<string, EventContract>(contracts.map((c) => [c.type, c]));

  const contractOf = (type: string): EventContract => {
    const contract = byType.get(type);
    if (!contract) throw new Error(`Event type ${type} is not part of the contract (events/index.ts)`);
    return contract;
  };

  return {
    contractOf,
    /**
     * Validates an outgoing event: a decider can never write a malformed event. Its actor is the
     * request being served, unless `explicit` names the request that caused it (a group commit
     * appends the events of several requests at once).
     */
    prepareForAppend: <E extends { type: string; data: unknown }>(
      event: E,
      now: Date,
      explicit?: { cause: RequestContext | undefined },
    ): { type: E['type']; data: unknown; metadata: OutgoingMetadata } => {
      const contract = contractOf(event.type);
      const data = contract.schema.parse(event.data);
      return {
        type: event.type,
        data,
        metadata: {
          messageId: crypto.randomUUID(),
          recordedAt: now.toISOString(),
          schemaVersion: contract.version,
          ...actorMetadata(explicit ? explicit.cause : currentRequest()),
        },
      };
    },
    /** Brings a stored event up to the current contract version, one upcaster at a time. */
    upcast: (type: string, data: unknown, meta: MetaWithoutVersion): AnyRecordedEvent => {
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
    },
  };
};

const registry = contractRegistry(allContracts);
export const { contractOf, prepareForAppend } = registry;

/**
 * Events as every reader of the log gets them. This is the one place the log's untyped rows become
 * the typed union: the contract validated each event when it was written, and the upcasters have
 * just brought it to today's shape.
 */
export const upcast = (type: string, data: unknown, meta: MetaWithoutVersion): RecordedEvent =>
  registry.upcast(type, data, meta) as RecordedEvent;
