import pg from 'pg';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { startDoors, type Doors } from '../support/doors';
import { freshPostgresData, rowsInExternal } from '../support/external';
import { uniqueName } from '../support/world';

// A native query (`SELECT … FROM <integration> ( … )`) goes to the customer's database as written,
// over every door: what a door answers for its own clients (MySQL's VERSION(), @@version,
// PostgreSQL's version()) must never be answered from inside one (issue 58). The shortcuts stay
// the door's own outside native queries.
describe('a native query is answered by its database, over every door', () => {
  let t: TestApp;
  let doors: Doors;
  let source: Awaited<ReturnType<typeof freshPostgresData>>;
  let db: string;
  let theirVersion: string;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    source = await freshPostgresData(['CREATE TABLE kept (id integer)']);
    db = uniqueName('pgnative');
    await t.http
      .post('/api/databases')
      .send({ database: { name: db, engine: 'postgres', parameters: source.parameters } })
      .expect(201);
    theirVersion = String((await rowsInExternal('postgres', source.name, 'SELECT version()'))[0]![0]);
    expect(theirVersion).toMatch(/^PostgreSQL /);
    doors = await startDoors(t);
  });
  afterAll(async () => {
    await doors?.close();
    await t?.dispose();
    await source?.drop();
  });

  const nativeForms = () => [
    `SELECT * FROM ${db} (SELECT version())`,
    `SELECT * FROM ${db} (SELECT version() AS v)`,
    `SELECT * FROM ${db} (SELECT VERSION(), current_user)`,
    `SELECT * FROM ${db} (SELECT version()) AS t`,
    `select x.* from ${db} ( select version() ) x`,
    `SELECT * FROM \`${db}\` (SELECT version())`,
    `SELECT * FROM (SELECT * FROM ${db} (SELECT version())) AS inner_t`,
    `SELECT * FROM ${db} (SELECT pg_catalog.version())`,
    `SELECT * FROM ${db} (SELECT version() WHERE 1 = 1)`,
    `SELECT * FROM ${db} (SELECT version() /* c */)`,
  ];

  it('over HTTP', async () => {
    const got: unknown[] = [];
    for (const query of nativeForms()) {
      const answer = await querySql(t, query);
      got.push({ query, answer: answer.data?.[0]?.[0] ?? answer.error_message });
    }
    expect(got).toEqual(nativeForms().map((query) => ({ query, answer: theirVersion })));
  });

  it('over the MySQL door', async () => {
    const got: unknown[] = [];
    for (const query of nativeForms()) {
      const answer = await doors.my.query({ sql: query, rowsAsArray: true }).then(
        ([rows]) => (rows as unknown[][])[0]![0],
        (e: Error) => e.message,
      );
      got.push({ query, answer });
    }
    expect(got).toEqual(nativeForms().map((query) => ({ query, answer: theirVersion })));
  });

  it('over the PostgreSQL door (simple and extended query)', async () => {
    const got: unknown[] = [];
    for (const query of nativeForms()) {
      for (const name of [undefined, uniqueName('prepared')]) {
        const answer = await doors.pgc.query({ text: query, name, rowMode: 'array' } as pg.QueryConfig).then(
          (r) => (r.rows as unknown[][])[0]![0],
          (e: Error) => e.message,
        );
        got.push({ query, answer });
      }
    }
    expect(got).toEqual(
      nativeForms().flatMap((query) => [0, 1].map(() => ({ query, answer: theirVersion }))),
    );
  });

  it("keeps each door's own answers outside native queries", async () => {
    const http = await querySql(t, 'SELECT VERSION()');
    expect(http.data?.[0]?.[0]).toMatch(/^8\.0\.17-mindledger/);
    const [my] = await doors.my.query({ sql: 'SELECT VERSION()', rowsAsArray: true });
    expect((my as unknown[][])[0]![0]).toMatch(/^8\.0\.17-mindledger/);
    const pgAnswer = await doors.pgc.query({ text: 'SELECT version()', rowMode: 'array' });
    expect(pgAnswer.rows[0]![0]).not.toBe(theirVersion);
    expect(pgAnswer.rows[0]![0]).toMatch(/^PostgreSQL /);
  });
});
