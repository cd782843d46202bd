import { querySql, startTestApp, type TestApp } from '../support/app';

// A statement this server does not run is refused with its own name and why, never with a parse
// error or a refusal that blames something else; and it changes nothing.
const cases: [statement: string, named: string][] = [
  ['CREATE INDEX by_name ON mindsdb.skills (name)', 'CREATE INDEX'],
  ['create unique index u ON mindsdb.skills (name)', 'CREATE UNIQUE INDEX'],
  ['ALTER TABLE mindsdb.skills ADD COLUMN x int', 'ALTER TABLE'],
  ['RENAME TABLE mindsdb.skills TO mindsdb.s2', 'RENAME TABLE'],
  ['TRUNCATE TABLE mindsdb.skills', 'TRUNCATE'],
  ['LOCK TABLES skills READ', 'LOCK TABLES'],
  ['CREATE FUNCTION f() RETURNS int RETURN 1', 'CREATE FUNCTION'],
  ['CREATE PROCEDURE p() BEGIN SELECT 1; END', 'CREATE PROCEDURE'],
  ["CREATE USER bob IDENTIFIED BY 'x'", 'CREATE USER'],
  ['GRANT ALL ON *.* TO bob', 'GRANT'],
  ['EXPLAIN SELECT 1', 'EXPLAIN'],
  ['BEGIN', 'BEGIN'],
  ["COPY (SELECT 1) TO '/tmp/x.csv'", 'COPY'],
  ['PRAGMA database_list', 'PRAGMA'],
  ['FLUSH TABLES', 'FLUSH'],
];

describe('statements the server does not run', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t.dispose());

  it.each(cases)('%s is refused as "%s is not supported", with the reason', async (statement, named) => {
    const before = (await t.http.get('/api/events').expect(200)).body.events.length;
    const answer = await querySql(t, statement);
    expect(answer).toMatchObject({ type: 'error', error_code: 1227 });
    expect(answer.error_message).toMatch(new RegExp(`^${named} is not supported: \\S`));
    expect(answer.error_message).not.toMatch(/Syntax error/);
    const after = (await t.http.get('/api/events').expect(200)).body.events.length;
    expect(after).toBe(before);
  });

  it('a word that starts no statement at all is a syntax error naming what was expected', async () => {
    const answer = await querySql(t, 'FROBNICATE mindsdb.skills');
    expect(answer).toMatchObject({ type: 'error', error_code: 1064 });
    expect(answer.error_message).toMatch(/Expected .*SELECT|Expected .*CREATE/);
  });
});
