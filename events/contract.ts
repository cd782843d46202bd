import { z } from 'zod';

/**
 * One event type of the log's contract. `version` is the schema version written today; older
 * versions found in the log are brought up to date by `upcasters[n]` (from version n to n + 1)
 * before anything else sees them, so deciders and projections only ever handle the newest shape.
 */
export type EventContract<Type extends string = string, Schema extends z.ZodType = z.ZodType> = {
  readonly type: Type;
  readonly version: number;
  readonly schema: Schema;
  readonly upcasters: Readonly<Record<number, (data: unknown) => unknown>>;
};

export const defineEvent = <Type extends string, Schema extends z.ZodType>(
  type: Type,
  schema: Schema,
  options: { version?: number; upcasters?: Record<number, (data: unknown) => unknown> } = {},
): EventContract<Type, Schema> => ({
  type,
  version: options.version ?? 1,
  schema,
  upcasters: options.upcasters ?? {},
});

/** The `{ type, data }` shape of one contract, as deciders produce it. */
export type EventOf<C extends EventContract> = { type: C['type']; data: z.infer<C['schema']> };

/** Where and when an event was stored: every event read back from the log carries this. */
export type EventMeta = {
  /** Global position in the whole log (unique, increasing in commit order on SQLite). */
  readonly position: bigint;
  readonly stream: string;
  /** 1-based position within its stream. */
  readonly streamPosition: bigint;
  readonly eventId: string;
  /** ISO-8601 UTC time the event was appended. */
  readonly recordedAt: string;
  /** The schema version it was written with (before upcasting). */
  readonly schemaVersion: number;
};

export type Recorded<E extends { type: string; data: unknown }> = E & { readonly meta: EventMeta };

/** Events as projections and the audit API see them: any type of the contract. */
export type AnyRecordedEvent = Recorded<{ type: string; data: unknown }>;
