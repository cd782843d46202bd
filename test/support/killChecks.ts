import { isDomainError } from '../../src/shared/errors';
import { SqlError, SqlErrorCode } from '../../src/sql/errors';
import type { TestApp } from './app';

/**
 * Known bugs more than one property's kill check injects, each on a test app's own objects (never
 * in src/). Each returns what undoes it, for the spec's `finally`.
 */

/**
 * The log's append rethrows what failed as a plain `Error`, so a refusal (the event contract's,
 * a ZodError; the store's, AppendRefused) reaches the command runner as no refusal it knows, and
 * the request is answered as the server's own failure (500, 1105).
 */
export const appendFailuresAsPlainErrors = (t: TestApp) => {
  const log = t.running.ctx.log;
  const append = log.append.bind(log);
  const spy = jest.spyOn(log, 'append').mockImplementation(async (...args) => {
    try {
      return await append(...args);
    } catch (error) {
      throw new Error(`append to ${args[0]} failed: ${(error as Error).message}`);
    }
  });
  return () => spy.mockRestore();
};

/**
 * A knowledge base's evaluation throws its refusals as the SQL layer's `SqlError` (1210) rather
 * than as invalid-request errors: the statement's naming passes them by (no statement named), and
 * REST's error mapper, which knows no SqlError, answers 500.
 */
export const evaluationRefusingAsSqlError = (t: TestApp) => {
  const kbs = t.running.services.knowledgeBases;
  const evaluate = kbs.evaluate;
  const spy = jest.spyOn(kbs, 'evaluate').mockImplementation(async (...call) => {
    try {
      return await evaluate(...call);
    } catch (error) {
      throw isDomainError(error) && error.kind === 'Invalid'
        ? new SqlError(SqlErrorCode.Invalid, error.detail)
        : error;
    }
  });
  return () => spy.mockRestore();
};
