import { isDomainError, isNotFoundError } from '../../src/shared/errors';
import { SqlError, SqlErrorCode } from '../../src/sql/errors';
import type { TestApp } from './app';

/**
 * Known bugs more than one property's kill check injects, each on a test app's own objects (never
 * in src/). Each returns what undoes it, for the spec's `finally`.
 */

/** `object[method]` rethrowing what fails as `as` makes it: the shape of the bugs below. */
const failuresRethrownAs = <O extends object>(
  object: O,
  method: keyof O & string,
  as: (error: unknown, args: unknown[]) => unknown,
) => {
  const original = object[method] as (...args: unknown[]) => Promise<unknown>;
  const spy = jest.spyOn(object, method as never) as unknown as jest.SpyInstance<Promise<unknown>, unknown[]>;
  spy.mockImplementation(async (...args) => {
    try {
      return await Reflect.apply(original, object, args);
    } catch (error) {
      throw as(error, args);
    }
  });
  return () => spy.mockRestore();
};

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
