import { SqlErrorCode, toSqlError } from '../../src/sql/errors';

describe('DuckDB errors as SQL errors', () => {
  it.each([
    ['TransactionContext Error: Catalog write-write conflict on alter with "agents"', 'TransactionContext'],
    ['INTERNAL Error: Attempted to access index 3 within vector of size 3', 'INTERNAL'],
    ['FATAL Error: Failed: database has been invalidated', 'FATAL'],
  ])('an internal failure (%s) reaches the client as its kind only', (message, kind) => {
    const error = toSqlError({ message });
    expect(error.code).toBe(SqlErrorCode.Internal);
    expect(error.message).toBe(`The query engine failed internally (${kind} error); retry the statement`);
    expect(error.message).not.toContain(message.slice(message.indexOf(':') + 2, message.indexOf(':') + 12));
  });

  it('a mistake in the query keeps DuckDB’s words, with MindsDB names', () => {
    const error = toSqlError({
      message: 'Binder Error: Referenced column "nope" not found in mdb_project_p.skills',
    });
    expect(error.code).toBe(SqlErrorCode.Binder);
    expect(error.message).toBe('Binder Error: Referenced column "nope" not found in p.skills');
  });
});
