import { z } from 'zod';
import { describePath, jsonViolation, type JsonViolation } from '../src/shared/jsonBounds';

/**
 * What an event may hold. An accepted event must be readable and projectable forever, so the
 * contract refuses values that would break a reader later: free-form JSON nested deeper than
 * `maxJsonDepth` (recursive readers overflow the stack: one such event made every read of the log
 * fail), events larger than `maxEventBytes`, NUL characters anywhere (PostgreSQL's jsonb cannot
 * store them). Set once at start from the configuration (MAX_JSON_DEPTH, MAX_EVENT_BYTES).
 */
type EventLimits = { readonly maxJsonDepth: number; readonly maxEventBytes: number };
const defaultEventLimits: EventLimits = { maxJsonDepth: 64, maxEventBytes: 1024 * 1024 };
let limits: EventLimits = defaultEventLimits;
export const configureEventLimits = (next: EventLimits) => {
  limits = next;
};

/** Marks a zod issue as a broken bound (the client's input), not a malformed event (a bug). */
const BOUND = 'mindledger.bound';

const addBoundIssue = (ctx: z.RefinementCtx, violation: JsonViolation) =>
  ctx.addIssue({
    code: 'custom',
    path: [...violation.path],
    message:
      violation.message +
      (violation.problem === 'depth'
        ? ' (MAX_JSON_DEPTH)'
        : violation.problem === 'bytes'
          ? ' (MAX_EVENT_BYTES)'
          : ''),
    params: { [BOUND]: true },
  });

/**
 * A free-form JSON object (a skill's params, a model's options): any keys and values, nested at
 * most MAX_JSON_DEPTH levels.
 */
export const freeFormObject = () =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const violation = jsonViolation(value, { maxDepth: limits.maxJsonDepth, maxBytes: limits.maxEventBytes });
    if (violation) addBoundIssue(ctx, violation);
  });

// Free-form values sit a few levels inside an event (data → skills[] → parameters): the event as
// a whole may be that much deeper than one of them.
const STRUCTURAL_DEPTH = 4;

const withinEventBounds = (data: unknown, ctx: z.RefinementCtx) => {
  const violation = jsonViolation(data, {
    maxDepth: limits.maxJsonDepth + STRUCTURAL_DEPTH,
    maxBytes: limits.maxEventBytes,
  });
  // A free-form field deeper than the limit has been reported already, at its own path.
  if (violation && violation.problem !== 'depth') addBoundIssue(ctx, violation);
};

/**
 * When `error` is the contract refusing values that break its bounds (and nothing else), what to
 * tell the client: each field and the limit it broke. Otherwise null (a malformed event is a bug).
 */
export const boundsViolationDetail = (error: unknown): string | null => {
  if (!(error instanceof z.ZodError) || error.issues.length === 0) return null;
  const isBound = (issue: z.core.$ZodIssue) =>
    issue.code === 'custom' && (issue.params as Record<string, unknown> | undefined)?.[BOUND] === true;
  if (!error.issues.every(isBound)) return null;
  const details = new Set<string>();
  for (const issue of error.issues) {
    const where = describePath(issue.path.filter((k): k is string | number => typeof k !== 'symbol'));
    details.add(where ? `${where} ${issue.message}` : `The event ${issue.message}`);
  }
  return [...details].join('; ');
};

/**
 * The kinds of resource the log's events are about. An event's secrets are sealed under a data key
 * of its resource (src/ledger/sealing.ts), and forgetting a resource destroys those keys
 * (src/ledger/secretKeeper.ts): which resource an event is about is read from its contract's
 * declaration, never guessed from its type's name.
 */
export const resourceKinds = [
  'project',
  'database',
  'skill',
  'agent',
  'chatbot',
  'file',
  'fileBlob',
  'model',
  'mlEngine',
  'agentRun',
  'agentThread',
  'knowledgeBase',
  'chatMessage',
  'chatChannel',
  'user',
  'accessToken',
  'session',
  'ledgerCheckpoint',
  'dataKeys',
  'job',
  'jobRun',
  'view',
  'trigger',
  'triggerFiring',
  'integrationWrite',
  'mcpSession',
  'llmQuery',
  'llmBudget',
] as const;
export type ResourceKind = (typeof resourceKinds)[number];

/**
 * The resource an event is about: its kind, and `id`, the field its events carry the resource's id
 * in (`kbId` for a knowledge base, `engineId` for an ML engine; the event that creates it carries
 * none: its id is that event's position). No `id`: its events name it only by `name`. The resource's
 * name is the event's `name` (else its `id` field, else none: the stream alone tells it).
 */
export type ResourceDeclaration = { readonly kind: ResourceKind; readonly id?: string };

/**
 * One event type of the log's contract. `version` is the schema version written today; older
 * versions found in the log are brought up to date by `upcasters[n]` (from version n to n + 1)
 * before anything else sees them, so deciders and projections only ever handle the newest shape.
 * `resource`: what the event is about (every contract of allContracts declares it, checked by the
 * compiler in events/index.ts and by test/ledger/every-secret-forgettable.spec.ts).
 */
export type EventContract<Type extends string = string, Schema extends z.ZodType = z.ZodType> = {
  readonly type: Type;
  readonly version: number;
  readonly schema: Schema;
  readonly upcasters: Readonly<Record<number, (data: unknown) => unknown>>;
  readonly resource?: ResourceDeclaration;
};

export const defineEvent = <
  Type extends string,
  Schema extends z.ZodType,
  Resource extends ResourceDeclaration | undefined = undefined,
>(
  type: Type,
  schema: Schema,
  options: {
    resource?: Resource;
    version?: number;
    upcasters?: Record<number, (data: unknown) => unknown>;
  } = {},
): EventContract<Type, Schema> & { readonly resource: Resource } => ({
  type,
  version: options.version ?? 1,
  schema: schema.superRefine(withinEventBounds),
  upcasters: options.upcasters ?? {},
  resource: options.resource as Resource,
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
  /**
   * Who caused it (`user:<id>`, `token:<id>`, `address:<client address>`, `system`), the request it
   * came with and the interface (rest, sql, mysql, agent, chatbot, system). Absent on events
   * written before they were recorded, and on background work's events.
   */
  readonly actor?: string;
  readonly requestId?: string;
  readonly via?: string;
};

export type Recorded<E extends { type: string; data: unknown }> = E & { readonly meta: EventMeta };

/** Events as projections and the audit API see them: any type of the contract. */
export type AnyRecordedEvent = Recorded<{ type: string; data: unknown }>;
