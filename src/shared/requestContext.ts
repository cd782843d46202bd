import { AsyncLocalStorage } from 'node:async_hooks';

/** Which door a request came in by. */
type Interface = 'rest' | 'sql' | 'mysql' | 'postgres' | 'agent' | 'chatbot' | 'job' | 'trigger' | 'system';

/** Who caused what a request does: a user, one of their access tokens, or (auth off) a client address. */
export type Actor = { readonly kind: 'user' | 'token' | 'address' | 'system'; readonly id: string };

/** An actor as records name it: `user:<id>`, `token:<id>`, `address:<client address>`, `system:…`. */
export const actorName = (actor: Actor) => `${actor.kind}:${actor.id}`;

/** What a signed-in caller may do: the role and, for a project-scoped token, the one project. */
export type Principal = {
  readonly user: string;
  readonly role: 'admin' | 'editor' | 'analyst' | 'auditor';
  readonly project: string | null;
};

/** What is known about the request being served, wherever in its call chain code runs. */
export type RequestContext = {
  readonly requestId: string;
  readonly interface: Interface;
  /** Recorded in the metadata of every event the request appends (absent: background work). */
  readonly actor?: Actor;
  /** Present only when authentication is on: what the caller may do (SQL checks it on the parse tree). */
  readonly principal?: Principal;
  /**
   * What the request appended, for its answer's X-Log-Position (HTTP requests only). Shared by
   * every context derived from the request's first one, so a write deep in its call chain counts.
   */
  readonly appended?: AppendedByRequest;
};

/** The global position of the last event a request appended; null while it appended none. */
type AppendedByRequest = { last: bigint | null };

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and everything it awaits) as part of this request. */
export const withRequest = <T>(context: RequestContext, fn: () => T): T => storage.run(context, fn);

/** The request being served, if any (background work such as training has none). */
export const currentRequest = (): RequestContext | undefined => storage.getStore();

/**
 * Records that a request appended events up to `position` (the highest one counts: a client reading
 * elsewhere waits for it and, the log being read in order, for all before it). The command runner
 * calls it for every append, with the request that sent the command.
 */
export const noteAppended = (request: RequestContext | undefined, position: bigint) => {
  const appended = request?.appended;
  if (appended && (appended.last === null || position > appended.last)) appended.last = position;
};

/**
 * Who a request is, as records of spending name them (LLM calls, agent runs, budget refusals): its
 * actor (`user:<id>`, `token:<id>`, …, `system` for background work), its signed-in user and role,
 * and its door.
 */
export const callerOfRequest = () => {
  const request = currentRequest();
  const actor = request?.actor ? actorName(request.actor) : 'system';
  return {
    caller: {
      actor,
      user: request?.principal?.user ?? null,
      role: request?.principal?.role ?? null,
    },
    via: request?.interface ?? 'system',
  };
};

export type CallerOfRequest = ReturnType<typeof callerOfRequest>;
