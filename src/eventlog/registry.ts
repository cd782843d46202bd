import crypto from 'node:crypto';
import { actorName, currentRequest, type RequestContext } from '../shared/requestContext';
import {
  allContracts,
  type AnyRecordedEvent,
  type EventContract,
  type EventMeta,
  type RecordedEvent,
} from '../../events';

// A lone surrogate is written by JSON.stringify as the escape `\udXXX` (a paired one as the
// character itself), so a stored text without such an escape cannot hold one.
export const MAY_HOLD_LONE_SURROGATE = /\\u[dD][89a-fA-F]/;

/** Every string (and key) of a freshly parsed value made well-formed, in place; no recursion. */
export const replaceLoneSurrogates = (root: unknown): unknown => {
  const fix = (v: unknown) => (typeof v === 'string' && !v.isWellFormed() ? v.toWellFormed() : v);
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        value[i] = fix(value[i]);
        if (value[i] !== null && typeof value[i] === 'object') stack.push(value[i]);
      }
    } else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const child = fix(record[key]);
        const wellFormedKey = fix(key) as string;
        if (wellFormedKey !== key) delete record[key];
        record[wellFormedKey] = child;
        if (child !== null && typeof child === 'object') stack.push(child);
      }
    }
  }
  return fix(root);
};

/**
 * A stored JSON text as readers get it. The contract refuses lone UTF-16 surrogates today; a log
 * written before it did may hold some (SQLite stores any text), and no read model can project
 * them. Such a string is read with each lone surrogate replaced by U+FFFD, the replacement
 * character, as every UTF-8 decoder does: the same on every read, so the read model, the ledger's
 * hashes and `verify` agree, and the event that stopped the read model before is projected.
 */
export const parseStoredJson = (text: string): unknown => {
  const value: unknown = JSON.parse(text);
  return MAY_HOLD_LONE_SURROGATE.test(text) ? replaceLoneSurrogates(value) : value;
};

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
    ...(request.actor ? { actor: actorName(request.actor) } : {}),
    ...(request.requestId ? { requestId: request.requestId } : {}),
    via: request.interface,
  };
};

/** What we hand to Emmett: our own event id, so we know it without reading the event back. */
type OutgoingMetadata = StoredMetadata & { messageId: string };

type MetaWithoutVersion = Omit<EventMeta, 'schemaVersion'> & { schemaVersion?: number };

/** An event's data as the log stores it: a JSON object. */
type EventData = Record<string, unknown>;

const isEventData = (value: unknown): value is EventData =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The contract as code: validates what is written and upcasts what is read. */
export const contractRegistry = (contracts: readonly EventContract[]) => {
  const byType = new Map<string, EventContract>(contracts.map((c) => [c.type, c]));

  const contractOf = (type: string): EventContract => {
    const contract = byType.get(type);
    if (!contract) throw new Error(`Event type ${type} is not part of the contract (events/index.ts)`);
    return contract;
  };

  /** A stored event's data, written at contract version `stored`, in the current version's shape. */
  const upcastData = (type: string, data: unknown, stored: number): unknown => {
    const contract = byType.get(type);
    let current = data;
    if (contract) {
      for (let v = stored; v < contract.version; v++) {
        const step = contract.upcasters[v];
        if (!step) throw new Error(`No upcaster for ${type} from version ${v} to ${v + 1}`);
        current = step(current);
      }
    }
    return current;
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
    ): { type: E['type']; data: EventData; metadata: OutgoingMetadata } => {
      const contract = contractOf(event.type);
      const data = contract.schema.parse(event.data);
      // Every contract is an object schema; the stores (Emmett's) take nothing else as data.
      if (!isEventData(data))
        throw new Error(`Event type ${event.type}'s contract does not describe an object`);
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
    upcastData,
    /** Brings a stored event up to the current contract version, one upcaster at a time. */
    upcast: (type: string, data: unknown, meta: MetaWithoutVersion): AnyRecordedEvent => {
      const stored = meta.schemaVersion ?? 1;
      return { type, data: upcastData(type, data, stored), meta: { ...meta, schemaVersion: stored } };
    },
  };
};

const registry = contractRegistry(allContracts);
export const { contractOf, prepareForAppend } = registry;

/**
 * An event read from either log, in today's shape, built in one go from what its row holds: the
 * metadata we stored (parsed, or Emmett's as it hands it over), and the row's own id, stream and
 * positions. Replay and verify read every event of the log through here, so nothing is copied on
 * the way (the metadata had been spread into a read meta, into the event's meta, and again by the
 * upcast: a third of a verification's reading).
 *
 * This is the one place the log's untyped rows become the typed union: the contract validated
 * each event when it was written, and the upcasters have just brought it to today's shape.
 */
export const fromStored = (
  type: string,
  data: unknown,
  stored: Partial<StoredMetadata> | null | undefined,
  eventId: string,
  stream: string,
  streamPosition: bigint,
  position: bigint,
): RecordedEvent => {
  const schemaVersion = stored?.schemaVersion ?? 1;
  // The keys in the order the event has always had them (a verification hashes its encoding).
  const meta: { -readonly [K in keyof EventMeta]: EventMeta[K] } = {
    position,
    stream,
    streamPosition,
    eventId,
    recordedAt: stored?.recordedAt ?? '',
    schemaVersion,
  };
  if (stored?.actor !== undefined) meta.actor = stored.actor;
  if (stored?.requestId !== undefined) meta.requestId = stored.requestId;
  if (stored?.via !== undefined) meta.via = stored.via;
  return { type, data: registry.upcastData(type, data, schemaVersion), meta } as RecordedEvent;
};

/**
 * Emmett's read metadata of an event as both logs hand it over; ours (recordedAt, schemaVersion,
 * actor) rides along when the event was appended here, which the optional fields say.
 */
export type ReadMeta = Partial<StoredMetadata> & {
  messageId: string;
  streamName: string;
  streamPosition: bigint;
  globalPosition?: bigint;
};

/** An event read from either log (with Emmett's read metadata), in today's shape. */
export const toRecorded = (type: string, data: unknown, m: ReadMeta): RecordedEvent =>
  fromStored(type, data, m, m.messageId, m.streamName, m.streamPosition, m.globalPosition ?? 0n);
