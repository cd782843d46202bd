import pg from 'pg';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData } from '../support/external';
import { POSTGRES_ADMIN_URL } from '../support/postgres';
import { startProxy } from '../support/proxy';
import { uniqueName } from '../support/world';

const ORDERS = [
  'CREATE TABLE orders (id int PRIMARY KEY, customer text, amount numeric(10,2), placed date)',
  "INSERT INTO orders SELECT g, 'c' || (g % 4), (g % 100) * 1.5, DATE '2024-01-01' + (g % 365) FROM generate_series(1, 10000) g",
  'CREATE SCHEMA sales',
  'CREATE TABLE sales.targets (customer text, goal int)',
  "INSERT INTO sales.targets VALUES ('c0', 1), ('c1', 2)",
  // Ordered by ICU's root collation, which puts 'apple' before 'Banana'; DuckDB orders bytes.
  'CREATE TABLE words (w text COLLATE "und-x-icu")',
  "INSERT INTO words VALUES ('apple'), ('Banana'), ('cherry')",
];
const CUSTOMERS = [
  'CREATE TABLE customers (name varchar(20), city varchar(20), vip boolean)',
  "INSERT INTO customers VALUES ('c0', 'Paris', 1), ('c1', 'Oslo', 0), ('c2', 'Rome', 1), ('c3', 'Lima', 0)",
];

describe.each(storeKinds)('external databases (event store: %s)', (store) => {
  let t: TestApp;
  let pgData: Awaited<ReturnType<typeof freshPostgresData>>;
  let myData: Awaited<ReturnType<typeof freshMariaData>>;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const sql = (query: string, params?: Record<string, unknown>) => querySql(t, query, { params });

  beforeAll(async () => {
    pgData = await freshPostgresData(ORDERS);
    myData = await freshMariaData(CUSTOMERS);
    proxy = await startProxy(5432);
    t = await startTestApp(store, { SQL_TIMEOUT_MS: '5000', DB_CONNECT_TIMEOUT_MS: '1000' });
    const p = { ...pgData.parameters, port: proxy.port };
    expect(
      await sql(`CREATE DATABASE shop WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(p)}`),
    ).toMatchObject({ type: 'ok' });
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'crm', engine: 'mariadb', parameters: myData.parameters } })
      .expect(201);
    await t.http
      .post('/api/projects/mindsdb/skills')
      .send({ skill: { name: 'c1', type: 'x', params: {} } })
      .expect(201);
  });
  afterAll(async () => {
    await t.dispose();
    await proxy.down().catch(() => undefined);
    await pgData.drop();
    await myData.drop();
  });

  it('lists an external database’s tables', async () => {
    expect((await sql('SHOW TABLES FROM shop')).data).toEqual([['orders'], ['words']]);
    expect((await sql('SHOW FULL TABLES FROM crm')).data).toEqual([['customers', 'BASE TABLE']]);
  });

  it('pushes a query over one database down whole: only the answer crosses the wire', async () => {
    proxy.resetCount();
    const a = await sql(
      'SELECT customer, count(*) AS n, sum(amount) AS total FROM shop.orders GROUP BY customer ORDER BY customer',
    );
    expect(a.column_names).toEqual(['customer', 'n', 'total']);
    expect(a.data).toEqual([
      ['c0', 2500, expect.any(Number)],
      ['c1', 2500, expect.any(Number)],
      ['c2', 2500, expect.any(Number)],
      ['c3', 2500, expect.any(Number)],
    ]);
    expect(proxy.bytes).toBeLessThan(4000);
    expect((await sql('SELECT goal FROM shop.sales.targets WHERE customer = :c', { c: 'c1' })).data).toEqual([
      [2],
    ]);
    expect((await sql('SELECT name FROM crm.customers WHERE vip = true ORDER BY name')).data).toEqual([
      ['c0'],
      ['c2'],
    ]);
  });

  it('joins an external table with another database, a file and a projection, pushing filters down', async () => {
    proxy.resetCount();
    const joined = await sql(
      `SELECT o.customer, c.city, count(*) AS n FROM shop.orders o JOIN crm.customers c ON c.name = o.customer
        WHERE o.id <= 100 GROUP BY 1, 2 ORDER BY 1`,
    );
    expect(joined.data).toEqual([
      ['c0', 'Paris', 25],
      ['c1', 'Oslo', 25],
      ['c2', 'Rome', 25],
      ['c3', 'Lima', 25],
    ]);
    // Only the 100 filtered orders came over, not 10,000.
    expect(proxy.bytes).toBeLessThan(30_000);

    await t.http
      .put('/api/files/goals')
      .attach('file', Buffer.from('customer,goal\nc0,10\nc3,30\n'), 'goals.csv')
      .expect(200);
    const withFile = await sql(
      'SELECT g.customer, g.goal, count(*) AS n FROM shop.orders o JOIN files.goals g ON g.customer = o.customer WHERE o.id < 9 GROUP BY 1, 2 ORDER BY 1',
    );
    expect(withFile.data).toEqual([
      ['c0', 10, 2],
      ['c3', 30, 2],
    ]);
    const withProjection = await sql(
      'SELECT s.NAME, count(*) AS n FROM shop.orders o JOIN mindsdb.skills s ON s.NAME = o.customer WHERE o.id < 9 GROUP BY 1',
    );
    expect(withProjection.data).toEqual([['c1', 2]]);
  });

  it('keeps, in a query run in DuckDB, every row DuckDB would keep, whatever the database’s collation', async () => {
    // A condition sent along with a fetch is DuckDB's as well as the database's. Before, an order
    // or `<>` with text went as written: MariaDB's case-insensitive collation found 'Paris' equal to
    // 'paris' (so not less, and not different from 'PARIS'), and PostgreSQL's ICU collation put
    // 'apple' before 'B'; those rows never came over, and DuckDB, comparing bytes, answered without them.
    const beside = (where: string) =>
      sql(`SELECT c.name FROM crm.customers c, range(1) r WHERE ${where} ORDER BY 1`).then((a) => a.data);
    expect(await beside("c.city < 'paris'")).toEqual([['c0'], ['c1'], ['c2'], ['c3']]);
    expect(await beside("c.city <> 'PARIS'")).toEqual([['c0'], ['c1'], ['c2'], ['c3']]);
    expect(await beside("c.city >= 'Paris'")).toEqual([['c0'], ['c2']]);
    // Equality keeps more there, if anything, and DuckDB's own check answers.
    expect(await beside("c.city = 'paris'")).toEqual([]);
    expect(await beside("c.city = 'Paris'")).toEqual([['c0']]);
    expect((await sql("SELECT w FROM shop.words, range(1) WHERE w > 'B' ORDER BY w")).data).toEqual([
      ['Banana'],
      ['apple'],
      ['cherry'],
    ]);
    // Numbers and dates compare as the database compares them: their filter still narrows the read.
    const where = "o.placed >= '2024-12-30' AND o.id > 9000";
    const inPostgres = (await sql(`SELECT count(*) AS n FROM shop.orders o WHERE ${where}`)).data;
    expect(inPostgres).toEqual([[3]]);
    proxy.resetCount();
    expect((await sql(`SELECT count(*) AS n FROM shop.orders o, range(1) r WHERE ${where}`)).data).toEqual(
      inPostgres,
    );
    expect(proxy.bytes).toBeLessThan(4000);
  });

  it('reads a table function beside an external table in DuckDB, not in the database', async () => {
    // Before, any query whose only tables were one database's went there whole, table functions
    // and all: PostgreSQL answered "function range(integer) does not exist", MariaDB a syntax error.
    proxy.resetCount();
    const joined = await sql(
      'SELECT o.id, r.range AS k FROM shop.orders o JOIN range(3) r ON o.id = r.range WHERE o.id < 5 ORDER BY 1',
    );
    expect(joined).toMatchObject({
      type: 'table',
      data: [
        [1, 1],
        [2, 2],
      ],
    });
    // The filter on the orders' own column still went down: 4 rows came over, not 10,000.
    expect(proxy.bytes).toBeLessThan(4000);
    expect(
      (
        await sql(
          'SELECT c.name, u.unnest AS n FROM crm.customers c, unnest([1, 2]) u WHERE c.vip ORDER BY 1, 2',
        )
      ).data,
    ).toEqual([
      ['c0', 1],
      ['c0', 2],
      ['c2', 1],
      ['c2', 2],
    ]);
    // An unqualified column of the table function is not taken for the database's.
    expect(
      (
        await sql(
          'SELECT count(*) AS n FROM shop.orders, generate_series(1, 2) WHERE generate_series = 2 AND id <= 3',
        )
      ).data,
    ).toEqual([[3]]);
    expect(
      (
        await sql(
          "SELECT name FROM crm.customers WHERE name IN (SELECT concat('c', range) FROM range(2)) ORDER BY 1",
        )
      ).data,
    ).toEqual([['c0'], ['c1']]);
  });

  it('sends a query whole as it was written: its order kept, its repeated column names allowed, its rows cut at the row limit', async () => {
    // Before, the text went inside `SELECT * FROM (…) AS mindledger_pushed LIMIT n`. MariaDB drops a
    // derived table's ORDER BY, so `ORDER BY name DESC` came back in the table's order, and refuses
    // a derived table's repeated names ("Duplicate column name 'name'").
    expect((await sql('SELECT name FROM crm.customers ORDER BY name DESC')).data).toEqual([
      ['c3'],
      ['c2'],
      ['c1'],
      ['c0'],
    ]);
    expect((await sql('SELECT city FROM crm.customers ORDER BY city')).data).toEqual([
      ['Lima'],
      ['Oslo'],
      ['Paris'],
      ['Rome'],
    ]);
    const twice = await sql(
      "SELECT a.name, b.name, count(*), count(*) FROM crm.customers a JOIN crm.customers b ON a.name = b.name WHERE a.name = 'c1' GROUP BY a.name, b.name",
    );
    expect(twice).toMatchObject({
      column_names: ['name', 'name', 'count(*)', 'count(*)'],
      data: [['c1', 'c1', 1, 1]],
    });
    expect(
      (
        await sql(
          'SELECT o.id, p.id FROM shop.orders o JOIN shop.orders p ON p.id = o.id + 1 ORDER BY o.id DESC LIMIT 2',
        )
      ).data,
    ).toEqual([
      [9999, 10000],
      [9998, 9999],
    ]);
    // The row limit is the driver's now: the rows before it, in the query's order, and `truncated`.
    const limited = await startTestApp(store, { SQL_ROW_LIMIT: '3' });
    try {
      await limited.http
        .post('/api/databases')
        .send({ database: { name: 'crm', engine: 'mariadb', parameters: myData.parameters } })
        .expect(201);
      const cut = await querySql(limited, 'SELECT name FROM crm.customers ORDER BY name DESC');
      expect(cut).toMatchObject({ data: [['c3'], ['c2'], ['c1']], truncated: true });
      const whole = await querySql(
        limited,
        "SELECT name FROM crm.customers WHERE name <> 'c0' ORDER BY name",
      );
      expect(whole.data).toEqual([['c1'], ['c2'], ['c3']]);
      expect(whole.truncated).toBeUndefined();
    } finally {
      await limited.dispose();
    }
  });

  it('fills a knowledge base by an INSERT with a column list from a database it reads whole', async () => {
    // Before, the column list was put around the query (`SELECT * FROM (…) AS mindledger_rows(id,
    // content)`) and sent with it: MariaDB has no such syntax and answered a syntax error.
    const kb = uniqueName('kb');
    expect(await sql(`CREATE KNOWLEDGE_BASE ${kb}`)).toMatchObject({ type: 'ok' });
    expect(
      await sql(
        `INSERT INTO ${kb} (id, content) SELECT name, city FROM crm.customers WHERE vip ORDER BY name`,
      ),
    ).toMatchObject({ type: 'ok', affected_rows: 2 });
    expect(
      await sql(
        `INSERT INTO ${kb} (id, content) SELECT customer, customer || ' placed an order' FROM shop.orders WHERE id = 7`,
      ),
    ).toMatchObject({ type: 'ok', affected_rows: 1 });
    expect((await sql(`SELECT id, chunk_content FROM ${kb} ORDER BY id`)).data).toEqual([
      ['c0', 'Paris'],
      ['c2', 'Rome'],
      ['c3', 'c3 placed an order'],
    ]);
    // More names than the query answers is refused, naming both counts; nothing is inserted.
    const tooMany = await sql(`INSERT INTO ${kb} (id, content, extra) SELECT name, city FROM crm.customers`);
    expect(tooMany).toMatchObject({
      type: 'error',
      error_message: expect.stringContaining('The column list names 3 columns and its query answers 2'),
    });
    // Refused by the answer's columns, whatever its rows: an empty answer too.
    const noRows = await sql(
      `INSERT INTO ${kb} (id, content, extra) SELECT name, city FROM crm.customers WHERE 1 = 0`,
    );
    expect(noRows.error_message).toContain('The column list names 3 columns and its query answers 2');
    expect((await sql(`SELECT count(*) AS n FROM ${kb}`)).data).toEqual([[3]]);
  });

  it('refuses to send MariaDB whole a query whose operators it reads otherwise, rather than answer otherwise', async () => {
    // Before, `name || 'x'` went to MariaDB as it was and came back 0 for every row (OR there), and
    // `2 ^ 3` came back 1 (a bitwise XOR there), where DuckDB, PostgreSQL and MindsDB answer 'c0x' and 8.
    const joined = await sql("SELECT name || 'x' AS n FROM crm.customers WHERE name = 'c0'");
    expect(joined).toMatchObject({ type: 'error', error_code: 1210 });
    expect(joined.error_message).toBe(
      'The query is sent whole to crm (mariadb), which reads `||` (it joins strings here, it is OR there: write concat(a, b), or OR) otherwise',
    );
    const power = await sql('SELECT 2 ^ 3 AS p FROM crm.customers');
    expect(power.error_message).toMatch(
      /^The query is sent whole to crm \(mariadb\), which reads `\^` \(a power here/,
    );
    // What the message says to write answers as meant; strings holding the operators are not operators.
    expect(
      (await sql("SELECT concat(name, 'x') AS n, power(2, 3) AS p FROM crm.customers WHERE name = 'c0'"))
        .data,
    ).toEqual([['c0x', 8]]);
    expect((await sql("SELECT name FROM crm.customers WHERE city <> '||^' AND name = 'c0'")).data).toEqual([
      ['c0'],
    ]);
    // PostgreSQL reads both as DuckDB does, and a query run in DuckDB reads them as DuckDB does.
    expect((await sql("SELECT customer || 'x' AS n, 2 ^ 3 AS p FROM shop.orders WHERE id = 4")).data).toEqual(
      [['c0x', 8]],
    );
    await t.http
      .put('/api/files/cities')
      .attach('file', Buffer.from('city\nParis\n'), 'cities.csv')
      .expect(200);
    expect(
      (await sql("SELECT c.name || 'x' AS n FROM crm.customers c JOIN files.cities f ON f.city = c.city"))
        .data,
    ).toEqual([['c0x']]);
  });

  it('runs native queries in the database’s own dialect', async () => {
    expect(
      (
        await sql(
          'SELECT * FROM shop (SELECT customer, max(id)::int AS top FROM orders GROUP BY customer) AS x ORDER BY customer',
        )
      ).data,
    ).toEqual([
      ['c0', 10000],
      ['c1', 9997],
      ['c2', 9998],
      ['c3', 9999],
    ]);
    expect((await sql('SELECT * FROM crm (SELECT name FROM customers WHERE city LIKE "R%")')).data).toEqual([
      ['c2'],
    ]);
  });

  it('reports external errors with the database named', async () => {
    expect(await sql('SELECT * FROM shop.nope')).toMatchObject({
      type: 'error',
      error_code: 1146,
      error_message: expect.stringMatching(/^shop: /),
    });
    expect(await sql('SELECT nope FROM crm.customers')).toMatchObject({ type: 'error', error_code: 1054 });
  });

  it('answers errors, not hangs, while a database is down, and works again when it returns', async () => {
    await proxy.down();
    // A connection failure (2003), not a hang ended by SQL_TIMEOUT_MS (that would be 3024).
    const down = await sql('SELECT count(*) FROM shop.orders');
    expect(down).toMatchObject({
      type: 'error',
      error_code: 2003,
      error_message: expect.stringMatching(/^shop: /),
    });
    await proxy.up();
    expect((await sql('SELECT count(*) AS n FROM shop.orders')).data).toEqual([[10000]]);
  });

  it('closes the pool when the database is dropped', async () => {
    // Dropping a database is this test's own doing: on a database of its own, beside `shop`.
    const own = await freshPostgresData(ORDERS);
    try {
      const name = uniqueName('dropped');
      expect(
        await sql(
          `CREATE DATABASE ${name} WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(own.parameters)}`,
        ),
      ).toMatchObject({ type: 'ok' });
      expect((await sql(`SELECT count(*) AS n FROM ${name}.orders`)).data).toEqual([[10000]]);
      const count = async () => {
        const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
        await c.connect();
        const r = await c.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
          [own.name],
        );
        await c.end();
        return Number(r.rows[0]!.n);
      };
      expect(await count()).toBeGreaterThan(0);

      expect(await sql(`DROP DATABASE ${name}`)).toMatchObject({ type: 'ok' });

      const deadline = Date.now() + 2000;
      while ((await count()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await count()).toBe(0);
      expect(await sql(`SELECT * FROM ${name}.orders`)).toMatchObject({ type: 'error', error_code: 1049 });
    } finally {
      await own.drop();
    }
  });
});
