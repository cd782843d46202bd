import { hashLeafText, type Hash } from './hashing';

/**
 * What the ledger needs of an event: `AnyRecordedEvent` (events/contract.ts) fits, and so does an
 * event an auditor rebuilt from an export. Optional metadata that is absent is left out of the leaf.
 */
export type RecordedEventLike = {
  readonly type: string;
  readonly data: unknown;
  readonly meta: {
    readonly position: bigint;
    readonly stream: string;
    readonly streamPosition?: bigint;
    readonly eventId?: string;
    readonly recordedAt?: string;
    readonly schemaVersion?: number;
    /** Who caused it, by which request and interface (src/eventlog/registry.ts). */
    readonly actor?: string;
    readonly requestId?: string;
    readonly via?: string;
  };
};

type WithToJson = { toJSON: (key: string) => unknown };
const hasToJson = (value: object): value is WithToJson =>
  typeof (value as Partial<WithToJson>).toJSON === 'function';

// Strings without quotes, backslashes, control characters or surrogates are written as they are;
// the others go through JSON.stringify, whose escaping is exactly JCS's (and escapes lone surrogates).
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const jsonString = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`);

/**
 * RFC 8785 (JCS) canonical JSON of the value JSON.stringify would store, plus bigints as decimal
 * strings. Object keys are sorted by UTF-16 code units (JavaScript's default sort, as JCS says),
 * strings and numbers are written as ECMAScript's JSON.stringify writes them (which is what JCS
 * specifies), no whitespace. Where JSON.stringify drops a value (undefined, functions, symbols) or
 * turns it into null (NaN, ±Infinity, undefined in an array), so does this: the leaf commits to what
 * the store keeps. Returns undefined for a value JSON would omit.
 */
export const canonicalJson = (value: unknown): string | undefined => {
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'number':
      // String(n) is ECMAScript's Number::toString, as JSON.stringify and JCS write numbers (−0 → "0").
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return `"${value.toString()}"`;
    case 'object': {
      if (value === null) return 'null';
      if (hasToJson(value)) return canonicalJson(value.toJSON(''));
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += canonicalJson(value[i]) ?? 'null';
        }
        return out + ']';
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      if (keys.length > 1) keys.sort();
      let out = '{';
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const encoded = canonicalJson(record[key]);
        if (encoded === undefined) continue;
        if (first) first = false;
        else out += ',';
        out += jsonString(key) + ':' + encoded;
      }
      return out + '}';
    }
    default:
      return undefined;
  }
};

/**
 * The leaf of one event: canonical JSON of
 * `{data, metadata: {actor, eventId, recordedAt, requestId, schemaVersion, streamPosition, via}, position, stream, type}`
 * with `position` and `streamPosition` as decimal strings. Keys are written here in their sorted
 * order (the same bytes canonicalJson would give, without sorting five keys per event).
 */
export const leafText = (event: RecordedEventLike): string => {
  const { meta } = event;
  const data = canonicalJson(event.data);
  let metadata = '';
  // Who did it is part of what is sealed: an edited actor changes the leaf like edited data does.
  if (meta.actor !== undefined) metadata += `,"actor":${jsonString(meta.actor)}`;
  if (meta.eventId !== undefined) metadata += `,"eventId":${jsonString(meta.eventId)}`;
  if (meta.recordedAt !== undefined) metadata += `,"recordedAt":${jsonString(meta.recordedAt)}`;
  if (meta.requestId !== undefined) metadata += `,"requestId":${jsonString(meta.requestId)}`;
  if (meta.schemaVersion !== undefined)
    metadata += `,"schemaVersion":${canonicalJson(meta.schemaVersion) ?? 'null'}`;
  if (meta.streamPosition !== undefined) metadata += `,"streamPosition":"${meta.streamPosition.toString()}"`;
  if (meta.via !== undefined) metadata += `,"via":${jsonString(meta.via)}`;
  return (
    '{' +
    (data === undefined ? '' : `"data":${data},`) +
    `"metadata":{${metadata.slice(1)}},"position":"${meta.position.toString()}","stream":${jsonString(meta.stream)},` +
    `"type":${jsonString(event.type)}}`
  );
};

/** The UTF-8 bytes an auditor hashes for this event. */
export const leafBytes = (event: RecordedEventLike): Buffer => Buffer.from(leafText(event), 'utf8');

/** RFC 6962 leaf hash of the event: SHA-256(0x00 || leafBytes(event)). */
export const eventLeafHash = (event: RecordedEventLike): Hash => hashLeafText(leafText(event));
