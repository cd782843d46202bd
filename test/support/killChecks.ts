import { isDomainError, isNotFoundError } from '../../src/shared/errors';
import { SqlError, SqlErrorCode } from '../../src/sql/errors';
import type { TestApp } from './app';

/**
 * Known bugs more than one property's kill check injects, each on a test app's own objects (never
 * in src/). Each returns what undoes it, for `whileBugged` (or the spec's `finally`).
 */

/** A method: what `methodReplaced` can replace. */
type Method = (...args: never[]) => unknown;

/**
 * `object[method]` answered by `replace(original)`, the original bound to `object`: the shape of
 * every bug below. Returns what undoes it.
 */
export const methodReplaced = <K extends PropertyKey, O extends Record<K, F>, F extends Method = O[K]>(
  object: O,
  method: K,
  replace: (original: (...args: Parameters<F>) => ReturnType<F>) => (...args: Parameters<F>) => ReturnType<F>,
) => {
  const unbound = object[method];
  const original = (...args: Parameters<F>): ReturnType<F> => Reflect.apply(unbound, object, args);
  const spy = jest.spyOn(object, method as never) as unknown as jest.SpyInstance<
    ReturnType<F>,
    Parameters<F>
  >;
  spy.mockImplementation(replace(original));
  return () => spy.mockRestore();
};

/** A kill check: `check` run while the bug `inject` makes is in, undone however it ends. */
export const whileBugged = async (inject: () => () => void, check: () => Promise<void>) => {
  const undo = inject();
  try {
    await check();
  } finally {
    undo();
  }
};

/** A method answering with a promise: what `failuresRethrownAs` can wrap. */
type AsyncMethod = (...args: never[]) => Promise<unknown>;

/** `object[method]` rethrowing what fails as `as` makes it. */
const failuresRethrownAs = <K extends PropertyKey, O extends Record<K, AsyncMethod>>(
  object: O,
  method: K,
  as: (error: unknown, args: unknown[]) => unknown,
) =>
  methodReplaced<K, O, AsyncMethod>(object, method, (original) => async (...args) => {
    try {
      return await original(...args);
    } catch (error) {
      throw as(error, args);
    }
  });

/**
 * A look-up reads its reference as an id first (`String(BigInt(ref))`, leading zeros dropped)
 * unchecked: a name throws a SyntaxError, no domain error, which the door answers as the server's
 * own failure (500).
 */
export const refsReadAsBigInt = (service: { get(project: string, ref: string): Promise<unknown> }) =>
  methodReplaced(service, 'get', (get) => async (project, ref) => get(project, String(BigInt(ref))));

/** What the SQL engine answers a statement. */
type SqlAnswer = Awaited<ReturnType<TestApp['running']['sql']['execute']>>;

/**
 * The SQL engine's answers rewritten by `rewrite` on their way out: the shape of the bugs that
 * change what a statement answers (each kill check says which).
 */
export const sqlAnswersRewritten = (t: TestApp, rewrite: (answer: SqlAnswer) => SqlAnswer) =>
  methodReplaced(
    t.running.sql,
    'execute',
    (execute) =>
      async (...call) =>
        rewrite(await execute(...call)),
  );

/**
 * The log's append rethrows what failed as a plain `Error`, so a refusal (the event contract's,
 * a ZodError; the store's, AppendRefused) reaches the command runner as no refusal it knows, and
 * the request is answered as the server's own failure (500, 1105).
 */
export const appendFailuresAsPlainErrors = (t: TestApp) =>
  failuresRethrownAs(
    t.running.ctx.log,
    'append',
    (error, [stream]) => new Error(`append to ${String(stream)} failed: ${(error as Error).message}`),
  );

/**
 * A knowledge base's evaluation throws its refusals as the SQL layer's `SqlError` (1210) rather
 * than as invalid-request errors: the statement's naming passes them by (no statement named), and
 * REST's error mapper, which knows no SqlError, answers 500.
 */
export const evaluationRefusingAsSqlError = (t: TestApp) =>
  failuresRethrownAs(t.running.services.knowledgeBases, 'evaluate', (error) =>
    isDomainError(error) && error.kind === 'Invalid'
      ? new SqlError(SqlErrorCode.Invalid, error.detail)
      : error,
  );

/**
 * An agent run's replay reports the project, agent or run it cannot find with a plain `Error`,
 * rather than the not-found refusal the error mapper answers 404: a 500.
 */
export const replayMissingAsPlainErrors = (t: TestApp) =>
  failuresRethrownAs(t.running.services.agentRuns, 'replay', (error) =>
    isNotFoundError(error) ? new Error((error as Error).message) : error,
  );
