/**
 * Errors are values with a kind. Deciders and services throw them; exactly one place
 * (src/http/problem.ts) maps a kind to an HTTP status, so no route picks status codes by hand.
 */
export type ErrorKind =
  | 'Invalid'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'PreconditionFailed'
  | 'UnsupportedMediaType'
  | 'PayloadTooLarge'
  | 'TooManyRequests'
  | 'Unavailable'
  | 'BadGateway'
  | 'GatewayTimeout';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    /** Short, stable summary (the problem's `title`). */
    readonly title: string,
    /** What exactly is wrong (the problem's `detail`). */
    readonly detail: string,
    /** For `Unavailable`: when the client may usefully try again, in seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

/**
 * An error that is not a DomainError, named after its class (its `name` in logs, stack traces and
 * the run records), so a subclass need not repeat its own name in a constructor of its own.
 */
export class NamedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export const invalid = (detail: string, title = 'Invalid request') =>
  new DomainError('Invalid', title, detail);
/** The request needs credentials it does not carry (401). */
export const unauthorized = (detail: string, title = 'Unauthorized') =>
  new DomainError('Unauthorized', title, detail);
/** The request is understood, and refused by policy (403). */
export const forbidden = (detail: string, title = 'Forbidden') => new DomainError('Forbidden', title, detail);
export const notFound = (detail: string, title = 'Not found') => new DomainError('NotFound', title, detail);
export const isNotFoundError = (e: unknown) => e instanceof DomainError && e.kind === 'NotFound';
const PROJECT_NOT_FOUND = 'Project not found';
/**
 * A project named that does not exist (any more): a 404, and to SQL an unknown database (1049).
 * `name` empty: a project never created (its stream is empty), named by nobody.
 */
export const projectNotFound = (name: string) =>
  notFound(
    name === '' ? 'Project name does not exist' : `Project name ${name} does not exist`,
    PROJECT_NOT_FOUND,
  );
export const isProjectNotFound = (e: DomainError) => e.kind === 'NotFound' && e.title === PROJECT_NOT_FOUND;
export const conflict = (detail: string, title = 'Conflict') => new DomainError('Conflict', title, detail);
export const preconditionFailed = (detail: string) =>
  new DomainError('PreconditionFailed', 'Precondition failed', detail);

/** The service cannot take this request now (busy, or its read model is behind); nothing was changed. */
export const unavailable = (detail: string, retryAfterSeconds = 1, title = 'Service unavailable') =>
  new DomainError('Unavailable', title, detail, retryAfterSeconds);

/**
 * A write whose events are stored, but not yet in this process's read model when the wait ran
 * out: it happened, so the answer is 202 Accepted with the event's position, never a 500.
 */
export class WriteAccepted extends Error {
  constructor(
    readonly position: bigint,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'WriteAccepted';
  }

  get body() {
    return { position: this.position.toString(), status: 'accepted', detail: this.detail };
  }
}

/** A service we depend on (an LLM provider) refused or failed: nothing here is wrong with the request. */
export const badGateway = (detail: string, title = 'Bad gateway') =>
  new DomainError('BadGateway', title, detail);
/** A service we depend on did not answer in time. */
export const gatewayTimeout = (detail: string, title = 'Gateway timeout') =>
  new DomainError('GatewayTimeout', title, detail);
/** A service we depend on asks us to slow down: so do we, with its Retry-After. */
export const tooManyRequests = (detail: string, retryAfterSeconds: number, title = 'Too many requests') =>
  new DomainError('TooManyRequests', title, detail, retryAfterSeconds);

export const isDomainError = (error: unknown): error is DomainError => error instanceof DomainError;

/**
 * A step recorded under a claim (a job's run, a trigger's firing, a chat message's answer): null
 * when the claim was lost meanwhile (the append conflicted: another process took the work over).
 */
export const unlessClaimLost = async <T>(step: Promise<T>): Promise<T | null> => {
  try {
    return await step;
  } catch (error) {
    if (isDomainError(error) && error.kind === 'Conflict') return null;
    throw error;
  }
};

/** A client's If-Match: the resource must still be at the version the client read (else 412). */
export const checkExpectedVersion = (
  what: string,
  resource: { name: string; version: bigint },
  expected: bigint | undefined,
) => {
  if (expected !== undefined && expected !== resource.version)
    throw preconditionFailed(`${what} ${resource.name} is at version ${resource.version}, not ${expected}`);
};

/** What went wrong, as text: an Error's message, anything else thrown as a string. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The innermost `code` of an error's cause chain (undici wraps ECONNREFUSED twice). */
export const causeCode = (error: unknown): string | undefined => {
  // Not `instanceof Error`: fetch's errors may come from another realm (jest's VM contexts).
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ('code' in current && typeof current.code === 'string') return current.code;
    current = 'cause' in current ? current.cause : undefined;
  }
  return undefined;
};
