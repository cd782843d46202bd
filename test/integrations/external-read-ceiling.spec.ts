import { querySql, startTestApp, type TestApp } from '../support/app';
import { BIG_TABLE, freshMariaData, freshPostgresData } from '../support/external';
import { startProxy } from '../support/proxy';

/**
 * A read from a customer's database (a native query, a mixed query's fetch of one of its tables, a
 * query pushed down whole) stops at what one read may bring (src/integrations/drivers.ts: FETCH_LIMIT
 * rows, FETCH_BYTES of text; shrunk here to 1,000 rows and 1 MiB): the service does not read the rest.
 * Told without timing, by the bytes the database sent through a proxy in front of it: the whole of
 * `big` is 50,000 rows of 1,024 characters (51.2 MB of text alone); a read that stops at its ceiling
 * takes its 1,000 rows (1 MB) and, on MariaDB, what the sockets held when the connection was closed
 * (2.3 MB measured; the kernel's buffers bound it).
 * Before, the drivers read the whole table into the heap and only then refused it (a 3,000,000-row
 * table raised the service's RSS by 400 MB; a larger one ended the process).
 */
const CEILING = { rows: 1000, bytes: 2 ** 20 };
/** `big`: 50,000 rows of 1,024 characters; `wide`: 4,000 of 10,240. */
const TABLE_TEXT = BIG_TABLE.text;
const WIDE_TEXT = 4000 * 10_240;

const engines = [
  {
    engine: 'postgres',
    port: 5432,
    data: () =>
      freshPostgresData([
        ...BIG_TABLE.postgres,
        'CREATE TABLE wide AS SELECT g AS id, repeat(md5(g::text), 320) AS body FROM generate_series(1, 4000) g',
      ]),
  },
  {
    engine: 'mariadb',
    port: 3306,
    data: () =>
      freshMariaData([
        ...BIG_TABLE.mariadb,
        'CREATE TABLE wide (id int PRIMARY KEY, body mediumtext)',
        'INSERT INTO wide SELECT seq, REPEAT(MD5(seq), 320) FROM seq_1_to_4000',
      ]),
  },
] as const;

describe.each(engines)(
  'a read from a customer database larger than its ceiling ($engine)',
  ({ engine, port, data }) => {
    let t: TestApp;
    let customer: Awaited<ReturnType<typeof data>>;
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    const sql = (query: string) => querySql(t, query);
    /** The bytes the database sent while `query` ran, and its answer. */
    const measured = async (query: string) => {
      proxy.resetCount();
      const answer = await sql(query);
      return { answer, bytes: proxy.bytes };
    };

    beforeAll(async () => {
      customer = await data();
      proxy = await startProxy(port);
      t = await startTestApp('sqlite', { SQL_TIMEOUT_MS: '20000' }, { externalReads: CEILING });
      await t.http
        .post('/api/databases')
        .send({
          database: { name: 'cust', engine, parameters: { ...customer.parameters, port: proxy.port } },
        })
        .expect(201);
    });
    afterAll(async () => {
      await t.dispose();
      await proxy.down().catch(() => undefined);
      await customer.drop();
    });

    it('refuses a native query over the table without reading it whole', async () => {
      const { answer, bytes } = await measured('SELECT * FROM cust (SELECT id, name FROM big)');
      expect(answer).toMatchObject({
        type: 'error',
        error_message: expect.stringContaining('A joined external table returned more than 1000 rows'),
      });
      expect(bytes).toBeLessThan(TABLE_TEXT / 4);
    });

    it('refuses a mixed query fetching the table without reading it whole, and fetches a filtered part', async () => {
      const { answer, bytes } = await measured(
        'SELECT count(*) AS n FROM cust.big b JOIN mindsdb.skills s ON s.NAME = b.name',
      );
      expect(answer).toMatchObject({
        type: 'error',
        error_message: expect.stringContaining('A joined external table returned more than 1000 rows'),
      });
      expect(bytes).toBeLessThan(TABLE_TEXT / 4);
      // Under the ceiling once its filter is sent along.
      expect(
        (
          await sql(
            'SELECT count(*) AS n FROM cust.big b LEFT JOIN mindsdb.skills s ON s.NAME = b.name WHERE b.id <= 500',
          )
        ).data,
      ).toEqual([[500]]);
    });

    it('answers a query pushed down whole with the rows up to the ceiling, marked truncated', async () => {
      const { answer, bytes } = await measured('SELECT id, name FROM cust.big');
      expect(answer).toMatchObject({ type: 'table', truncated: true });
      expect((answer as { data: unknown[] }).data).toHaveLength(CEILING.rows);
      expect(bytes).toBeLessThan(TABLE_TEXT / 4);
    });

    it('stops at the ceiling of bytes too: 4,000 rows of 10,240 characters against 1 MiB', async () => {
      const { answer, bytes } = await measured('SELECT * FROM cust (SELECT id, body FROM wide)');
      expect(answer).toMatchObject({
        type: 'error',
        error_message: expect.stringContaining(
          `A joined external table returned more than ${2 ** 20} bytes of text`,
        ),
      });
      expect(bytes).toBeLessThan(WIDE_TEXT / 4);
    });

    it('refuses to train on a read it cut: the model fails naming the ceiling, trained on none of it', async () => {
      const name = `cut_${engine}`;
      const answer = await sql(
        `CREATE MODEL mindsdb.${name} FROM cust (SELECT id, id % 7 AS k FROM big) PREDICT k USING join_learn_process = true`,
      );
      expect(answer.type).toBe('table');
      const models = await sql(`SELECT STATUS, ERROR, ACTIVE FROM mindsdb.models WHERE NAME = '${name}'`);
      expect(models.data).toEqual([
        [
          'error',
          expect.stringContaining(
            `The query sent to cust returned more than ${CEILING.rows} rows, more than one read from a database may bring`,
          ),
          false,
        ],
      ]);
    });

    it('keeps its connections usable after the reads it cut: more queries than the pool has slots', async () => {
      for (let i = 0; i < 3; i++)
        expect(await sql('SELECT * FROM cust (SELECT id, name FROM big)')).toMatchObject({ type: 'error' });
      for (let i = 0; i < 6; i++)
        expect(
          (await sql(`SELECT * FROM cust (SELECT count(*) AS n FROM big WHERE id <= ${i})`)).data,
        ).toEqual([[i]]);
      expect((await sql('SHOW TABLES FROM cust')).data).toEqual([['big'], ['wide']]);
      expect(
        (
          await sql(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'cust' AND TABLE_NAME = 'big'",
          )
        ).data,
      ).toEqual([['id'], ['name']]);
    });
  },
);
