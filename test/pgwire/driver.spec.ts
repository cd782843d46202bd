/**
 * The PostgreSQL door through node-postgres, against the real app (SQLite store): what the HTTP
 * endpoint answers, in PostgreSQL's types and text forms (checked against a real PostgreSQL server
 * where both dialects can write the same value), parameters, binary results, prepared statements,
 * errors and transaction blocks, writes, large and cut results, and cancelling.
 */
import pg from 'pg';
import { serialize } from 'pg-protocol';
import type { NoticeMessage, RowDescriptionMessage } from 'pg-protocol/dist/messages';
import { querySql } from '../support/app';
import { POSTGRES_ADMIN_URL } from '../support/postgres';
import {
  cellsOf,
  endlessQuery,
  eventually,
  failureOf,
  namesOf,
  RawPg,
  rowsOf,
  sendCancelRequest,
  startPgFront,
  type PgFront,
} from './support';

/**
 * One column of every type the door maps: written in DuckDB's dialect (sent to the door) and in
 * PostgreSQL's (sent to a real PostgreSQL server), with the OID both must answer.
 */
type Column = { name: string; duck: string; postgres: string };
const COLUMNS: (Column & { oid: number })[] = [
  { name: 'yes', duck: 'true', postgres: 'true', oid: 16 },
  { name: 'no', duck: 'false', postgres: 'false', oid: 16 },
  { name: 'small', duck: '-2::SMALLINT', postgres: '-2::smallint', oid: 21 },
  { name: 'int', duck: '-3::INTEGER', postgres: '-3::integer', oid: 23 },
  { name: 'big', duck: '9007199254740993::BIGINT', postgres: '9007199254740993::bigint', oid: 20 },
  { name: 'd', duck: '1.5e300::DOUBLE', postgres: '1.5e300::float8', oid: 701 },
  { name: 'tenth', duck: '0.1::DOUBLE', postgres: '0.1::float8', oid: 701 },
  { name: 'f', duck: '0.25::FLOAT', postgres: '0.25::float4', oid: 700 },
  { name: 'price', duck: '1.5::DECIMAL(10,2)', postgres: '1.5::numeric(10,2)', oid: 1700 },
  { name: 'loss', duck: '(-0.05)::DECIMAL(10,3)', postgres: '(-0.05)::numeric(10,3)', oid: 1700 },
  { name: 'bytes', duck: "'xy'::BLOB", postgres: "'xy'::bytea", oid: 17 },
  { name: 'day', duck: "DATE '2024-02-29'", postgres: "DATE '2024-02-29'", oid: 1082 },
  { name: 'clock', duck: "TIME '01:02:03.25'", postgres: "TIME '01:02:03.25'", oid: 1083 },
  {
    name: 'ts',
    duck: "TIMESTAMP '2024-01-02 03:04:05.5'",
    postgres: "TIMESTAMP '2024-01-02 03:04:05.5'",
    oid: 1114,
  },
  {
    name: 'tz',
    duck: "TIMESTAMPTZ '2024-01-02 03:04:05+00'",
    postgres: "TIMESTAMPTZ '2024-01-02 03:04:05+00'",
    oid: 1184,
  },
  {
    name: 'span',
    duck: "INTERVAL '1 year 2 months 3 days 04:05:06.7'",
    postgres: "INTERVAL '1 year 2 months 3 days 04:05:06.7'",
    oid: 1186,
  },
  {
    name: 'id',
    duck: "'550e8400-e29b-41d4-a716-446655440000'::UUID",
    postgres: "'550e8400-e29b-41d4-a716-446655440000'::uuid",
    oid: 2950,
  },
  { name: 's', duck: "'héllo ✓'", postgres: "'héllo ✓'::text", oid: 25 },
  { name: 'ints', duck: '[1, NULL, 3]', postgres: 'ARRAY[1, NULL, 3]', oid: 1007 },
  { name: 'null_int', duck: 'NULL::INTEGER', postgres: 'NULL::integer', oid: 23 },
  { name: 'null_dec', duck: 'NULL::DECIMAL(10,2)', postgres: 'NULL::numeric(10,2)', oid: 1700 },
  { name: 'null_day', duck: 'NULL::DATE', postgres: 'NULL::date', oid: 1082 },
  { name: 'null_ts', duck: 'NULL::TIMESTAMP', postgres: 'NULL::timestamp', oid: 1114 },
  { name: 'null_s', duck: 'NULL::VARCHAR', postgres: 'NULL::text', oid: 25 },
];
const selectOfColumns = (columns: Column[], dialect: 'duck' | 'postgres') =>
  `SELECT ${columns.map((c) => `${c[dialect]} AS ${c.name}`).join(', ')}`;
const EVERY_TYPE = selectOfColumns(COLUMNS, 'duck');

/** Values of every type sent in binary, written in both dialects. */
const BINARY_COLUMNS: Column[] = [
  { name: 'small', duck: '-2::SMALLINT', postgres: '-2::smallint' },
  { name: 'int', duck: '2147483647', postgres: '2147483647' },
  { name: 'big', duck: '-9007199254740993::BIGINT', postgres: '-9007199254740993::bigint' },
  { name: 'f', duck: '0.25::FLOAT', postgres: '0.25::float4' },
  { name: 'd', duck: '-1.5e300::DOUBLE', postgres: '-1.5e300::float8' },
  { name: 'yes', duck: 'true', postgres: 'true' },
  { name: 'no', duck: 'false', postgres: 'false' },
  { name: 'day', duck: "DATE '2024-02-29'", postgres: "DATE '2024-02-29'" },
  { name: 'before', duck: "DATE '1999-12-31'", postgres: "DATE '1999-12-31'" },
  {
    name: 'ts',
    duck: "TIMESTAMP '2024-01-02 03:04:05.123456'",
    postgres: "TIMESTAMP '2024-01-02 03:04:05.123456'",
  },
  {
    name: 'last_second',
    duck: "TIMESTAMP '1999-12-31 23:59:59'",
    postgres: "TIMESTAMP '1999-12-31 23:59:59'",
  },
  {
    name: 'tz',
    duck: "TIMESTAMPTZ '2024-06-30 23:59:59.5+00'",
    postgres: "TIMESTAMPTZ '2024-06-30 23:59:59.5+00'",
  },
  { name: 'clock', duck: "TIME '01:02:03.25'", postgres: "TIME '01:02:03.25'" },
  {
    name: 'span',
    duck: "INTERVAL '1 year 2 months 3 days 04:05:06.7'",
    postgres: "INTERVAL '1 year 2 months 3 days 04:05:06.7'",
  },
  { name: 'price', duck: '12345.678::DECIMAL(12,3)', postgres: '12345.678::numeric(12,3)' },
  { name: 'loss', duck: '(-0.5)::DECIMAL(4,2)', postgres: '(-0.5)::numeric(4,2)' },
  { name: 'zero', duck: '0::DECIMAL(4,2)', postgres: '0::numeric(4,2)' },
  { name: 'tiny', duck: '0.0001::DECIMAL(8,4)', postgres: '0.0001::numeric(8,4)' },
  { name: 'round', duck: '10000::DECIMAL(10,0)', postgres: '10000::numeric(10,0)' },
  {
    name: 'id',
    duck: "'550e8400-e29b-41d4-a716-446655440000'::UUID",
    postgres: "'550e8400-e29b-41d4-a716-446655440000'::uuid",
  },
  { name: 'bytes', duck: "'\\x00\\xFF'::BLOB", postgres: "'\\x00ff'::bytea" },
  { name: 's', duck: "'héllo'", postgres: "'héllo'::text" },
  { name: 'nothing', duck: 'NULL::INTEGER', postgres: 'NULL::integer' },
  { name: 'ints', duck: '[1, NULL, -3]::INTEGER[]', postgres: "'{1,NULL,-3}'::int4[]" },
  { name: 'texts', duck: "['a', 'b c', '']", postgres: "ARRAY['a', 'b c', '']::text[]" },
  { name: 'none', duck: '[]::BIGINT[]', postgres: "'{}'::int8[]" },
  { name: 'days', duck: "[DATE '2024-02-29']", postgres: "ARRAY[DATE '2024-02-29']" },
];

/** The notices a client receives while `run` runs, with what `run` returned. */
const noticesDuring = async <T>(client: pg.Client, run: () => Promise<T>) => {
  const notices: { severity?: string; code?: string; message?: string }[] = [];
  const listener = (n: NoticeMessage) =>
    notices.push({ severity: n.severity, code: n.code, message: n.message });
  client.on('notice', listener);
  try {
    return { result: await run(), notices };
  } finally {
    client.off('notice', listener);
  }
};

/** A statement run over the extended protocol with every result column in `format`: its columns and cells. */
const runOn = async (raw: RawPg, sql: string, format: 'text' | 'binary') => {
  raw.send(
    serialize.parse({ text: sql }),
    serialize.bind({ binary: format === 'binary' }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  );
  const messages = await raw.until('readyForQuery');
  const description = messages.find((m) => m.name === 'rowDescription') as RowDescriptionMessage | undefined;
  return { messages, fields: description?.fields ?? [], cells: cellsOf(messages)[0] ?? [] };
};

/** Cells as the server sent them: node-postgres's parsers replaced by the identity. */
const rawText = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

const fieldShape = (f: pg.FieldDef) => ({ name: f.name, oid: f.dataTypeID, modifier: f.dataTypeModifier });

/** An HTTP cell and the value node-postgres parsed from the door's text for it, brought to one form. */
const comparable = (cell: unknown, duckType: string): unknown => {
  if (cell === null) return null;
  if (duckType === 'BLOB') return Buffer.from(String(cell), 'base64');
  if (duckType === 'DATE') return new Date(`${String(cell)}T00:00:00`).getTime();
  if (duckType === 'TIMESTAMP') return new Date(String(cell).replace(' ', 'T')).getTime();
  if (duckType === 'TIMESTAMP WITH TIME ZONE')
    return new Date(`${String(cell).replace(' ', 'T')}Z`).getTime();
  if (duckType.startsWith('DECIMAL') || duckType === 'BIGINT') return String(Number(cell));
  return cell;
};
const parsedComparable = (value: unknown, duckType: string): unknown => {
  if (value === null) return null;
  if (value instanceof Date) return value.getTime();
  if (duckType.startsWith('DECIMAL') || duckType === 'BIGINT') return String(Number(value));
  if (duckType === 'INTERVAL') {
    const i = value as Record<string, number | undefined>;
    const micros =
      ((i.hours ?? 0) * 3600 + (i.minutes ?? 0) * 60 + (i.seconds ?? 0)) * 1e6 + (i.milliseconds ?? 0) * 1e3;
    return {
      months: (i.years ?? 0) * 12 + (i.months ?? 0),
      days: i.days ?? 0,
      micros: String(Math.round(micros)),
    };
  }
  return value;
};

describe('PostgreSQL protocol through node-postgres (SQLite store)', () => {
  let front: PgFront;
  let c: pg.Client;

  beforeAll(async () => {
    front = await startPgFront({ env: { SQL_ROW_LIMIT: '100000', SQL_TIMEOUT_MS: '600000' } });
    c = await front.connect();
  });
  afterAll(() => front.dispose());

  describe('given a query of every column type', () => {
    it('answers the columns, OIDs and text forms a real PostgreSQL server answers for the same values', async () => {
      const ours = await c.query({ text: EVERY_TYPE, rowMode: 'array', types: rawText });
      const postgres = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, options: '-c TimeZone=UTC' });
      await postgres.connect();
      try {
        const theirs = await postgres.query({
          text: selectOfColumns(COLUMNS, 'postgres'),
          rowMode: 'array',
          types: rawText,
        });
        expect(ours.fields.map(fieldShape)).toEqual(theirs.fields.map(fieldShape));
        expect(ours.rows).toEqual(theirs.rows);
      } finally {
        await postgres.end();
      }
      expect(ours.fields.map((f) => f.dataTypeID)).toEqual(COLUMNS.map((c) => c.oid));
      // What PostgreSQL prints, for the record: a change on either side shows here.
      expect(ours.rows[0]).toEqual(
        expect.arrayContaining([
          't',
          'f',
          '1.50',
          '-0.050',
          '\\x7879',
          '2024-01-02 03:04:05+00',
          '{1,NULL,3}',
        ]),
      );
    });

    it('answers the values the HTTP endpoint answers, as node-postgres parses them', async () => {
      const { rows, fields } = await c.query({ text: EVERY_TYPE, rowMode: 'array' });
      const http = await querySql(front.app, EVERY_TYPE);
      expect(http.type).toBe('table');
      expect(fields.map((f) => f.name)).toEqual(http.column_names);
      const types = http.column_types!;
      const expected = http.data![0]!.map((cell, i) => comparable(cell, types[i]!));
      const received = (rows[0] as unknown[]).map((value, i) => parsedComparable(value, types[i]!));
      expect(received).toEqual(expected);
      expect(types).toEqual(
        expect.arrayContaining(['DECIMAL(10,2)', 'TIMESTAMP WITH TIME ZONE', 'INTEGER[]']),
      );
    });

    it('answers lists as PostgreSQL arrays (int[] and text[]) that node-postgres reads as arrays', async () => {
      const { rows, fields } = await c.query("SELECT [1, NULL, 3] AS ints, ['a b', NULL, 'x\"y'] AS texts");
      expect(fields.map((f) => f.dataTypeID)).toEqual([1007, 1009]);
      expect(rows).toEqual([{ ints: [1, null, 3], texts: ['a b', null, 'x"y'] }]);
    });
  });

  describe('given parameters ($1 …)', () => {
    it('binds numbers, strings with quotes and backslashes, NULL and booleans as the engine parameters', async () => {
      const text = 'it\'s a \\ back\\slash and a "quote"';
      const { rows } = await c.query(
        'SELECT $1::INTEGER + 1 AS n, $2 AS s, $3::VARCHAR IS NULL AS missing, $4::BOOLEAN AS yes, $5::DOUBLE * 2 AS f, $6::DATE + 1 AS next_day',
        [41, text, null, true, 1.25, '2024-02-28'],
      );
      expect(rows).toEqual([
        { n: 42, s: text, missing: true, yes: true, f: 2.5, next_day: expect.any(Date) },
      ]);
      expect((rows[0] as { next_day: Date }).next_day.getDate()).toBe(29);
      const call = front.calls.at(-1)!;
      expect(call.query).toBe(
        'SELECT :__pg_param_1::INTEGER + 1 AS n, :__pg_param_2 AS s, :__pg_param_3::VARCHAR IS NULL AS missing, :__pg_param_4::BOOLEAN AS yes, :__pg_param_5::DOUBLE * 2 AS f, :__pg_param_6::DATE + 1 AS next_day',
      );
      expect(call.params).toEqual({
        __pg_param_1: '41',
        __pg_param_2: text,
        __pg_param_3: null,
        __pg_param_4: 'true',
        __pg_param_5: '1.25',
        __pg_param_6: '2024-02-28',
      });
    });

    it('filters a MindsDB table by a parameter, a new value each time', async () => {
      const sql = 'SELECT NAME FROM information_schema.DATABASES WHERE NAME = $1';
      expect((await c.query(sql, ['files'])).rows).toEqual([{ NAME: 'files' }]);
      expect((await c.query(sql, ['mindsdb'])).rows).toEqual([{ NAME: 'mindsdb' }]);
      expect((await c.query(sql, ["no'such"])).rows).toEqual([]);
    });

    it('runs a named prepared statement twice, parsed once, and forgets it on DEALLOCATE', async () => {
      const query = { name: 'twice', text: 'SELECT $1::INTEGER * 2 AS n' };
      expect((await c.query({ ...query, values: [21] })).rows).toEqual([{ n: 42 }]);
      expect((await c.query({ ...query, values: [50] })).rows).toEqual([{ n: 100 }]);
      await c.query('DEALLOCATE twice');
      // node-postgres still believes it prepared: it sends Bind alone.
      expect(await failureOf(c.query({ ...query, values: [1] }))).toMatchObject({
        code: '26000',
        message: 'prepared statement "twice" does not exist',
      });
    });
  });

  describe("given statements that read the connection's values", () => {
    // A text read once is kept for the next Parse of the same text (node-postgres parses its unnamed
    // statement on every call), and a prepared one is not read again at Bind, unless it holds a
    // connection value: those are written in as they are when the statement is bound.
    it('answers current_setting as it is at each run: by name after SET, and as the same text again', async () => {
      const named = {
        name: 'app_name',
        text: "SELECT current_setting('application_name') AS a, $1::INTEGER AS n",
      };
      await c.query("SET application_name = 'first'");
      expect((await c.query({ ...named, values: [1] })).rows).toEqual([{ a: 'first', n: 1 }]);
      const unnamed = "SELECT current_setting('application_name') AS a";
      expect((await c.query(unnamed)).rows).toEqual([{ a: 'first' }]);
      expect((await c.query(unnamed, [])).rows).toEqual([{ a: 'first' }]);
      await c.query("SET application_name = 'second'");
      expect((await c.query({ ...named, values: [2] })).rows).toEqual([{ a: 'second', n: 2 }]);
      expect((await c.query(unnamed)).rows).toEqual([{ a: 'second' }]);
      expect((await c.query(unnamed, [])).rows).toEqual([{ a: 'second' }]);
      await c.query('DEALLOCATE app_name');
    });

    it('answers a repeated text with no connection value the same each time, and a changed one anew', async () => {
      const sql = 'SELECT $1::INTEGER + 1 AS n';
      for (const v of [1, 2, 3]) expect((await c.query(sql, [v])).rows).toEqual([{ n: v + 1 }]);
      expect((await c.query('SELECT $1::INTEGER + 2 AS n', [1])).rows).toEqual([{ n: 3 }]);
      expect((await c.query(sql, [9])).rows).toEqual([{ n: 10 }]);
    });
  });

  describe('given binary results (Bind asking format 1)', () => {
    let raw: RawPg;
    beforeEach(async () => {
      raw = await RawPg.connect(front.port);
    });
    afterEach(() => raw.destroy());

    it('sends, for every type with a binary form, the bytes a real PostgreSQL server sends for the same values', async () => {
      const ours = await runOn(raw, selectOfColumns(BINARY_COLUMNS, 'duck'), 'binary');
      const url = new URL(POSTGRES_ADMIN_URL);
      // A raw client speaks no authentication: the test server's admin URL connects without a password.
      const postgres = await RawPg.connect(
        Number(url.port || 5432),
        { user: decodeURIComponent(url.username), database: url.pathname.slice(1), TimeZone: 'UTC' },
        url.hostname,
      );
      const theirs = await runOn(postgres, selectOfColumns(BINARY_COLUMNS, 'postgres'), 'binary').finally(
        () => postgres.destroy(),
      );
      expect(ours.fields.map((f) => [f.name, f.dataTypeID, f.format])).toEqual(
        theirs.fields.map((f) => [f.name, f.dataTypeID, 'binary']),
      );
      const byColumn = (cells: (Buffer | null)[]) =>
        Object.fromEntries(BINARY_COLUMNS.map((c, i) => [c.name, cells[i]?.toString('hex') ?? null]));
      expect(byColumn(ours.cells)).toEqual(byColumn(theirs.cells));
      // For the record: a date is days since 2000-01-01, a timestamp microseconds since then.
      expect(byColumn(ours.cells)).toMatchObject({ before: 'ffffffff', last_second: 'fffffffffff0bdc0' });
    });
  });

  describe('given statements that fail', () => {
    it.each([
      ['SELECT nope', '42703', 1054],
      ['SELECT * FROM mindsdb.missing', '42P01', 1146],
      ['SELEC 1', '42601', 1064],
      ['DELETE FROM mindsdb.models', '42501', 1227],
    ])(
      'answers %s with SQLSTATE %s, the HTTP message, and the engine code in the detail',
      async (sql, code, engineCode) => {
        const http = await querySql(front.app, sql);
        expect(http.error_code).toBe(engineCode);
        expect(await failureOf(c.query(sql))).toMatchObject({
          severity: 'ERROR',
          code,
          message: http.error_message,
          detail: `engine error ${engineCode} in: ${sql}`,
        });
        expect((await c.query('SELECT 2 AS still_here')).rows).toEqual([{ still_here: 2 }]);
      },
    );

    it('answers a parameter sent no value (the simple protocol has none) as PostgreSQL does: 42P02 naming it', async () => {
      expect(await failureOf(c.query('SELECT $1 AS a'))).toMatchObject({
        code: '42P02',
        message: 'there is no parameter $1',
      });
      expect((await c.query('SELECT 2 AS still_here')).rows).toEqual([{ still_here: 2 }]);
    });

    it('reports a quote never closed as a syntax error at its position', async () => {
      expect(await failureOf(c.query("SELECT 1 AS a; SELECT 'open"))).toMatchObject({
        code: '42601',
        message: "Unterminated ' quoted text starting at character 23",
        position: '23',
      });
    });

    it('stops a multi-statement query at its first error: the statements after it do not run', async () => {
      expect(await failureOf(c.query('SELECT 1; SELECT nope; CREATE PROJECT never_made'))).toMatchObject({
        code: '42703',
      });
      const projects = (await front.app.http.get('/api/projects').expect(200)).body as { name: string }[];
      expect(projects.map((p) => p.name)).not.toContain('never_made');
    });
  });

  describe('given a transaction block', () => {
    it('after an error, answers 25P02 to every statement (status E) until ROLLBACK', async () => {
      const raw = await RawPg.connect(front.port);
      try {
        const run = async (sql: string) => {
          raw.send(serialize.query(sql));
          return raw.until('readyForQuery');
        };
        expect((await run('BEGIN')).at(-1)).toMatchObject({ status: 'T' });
        const failed = await run('SELECT nope');
        expect(failed[0]).toMatchObject({ name: 'error', code: '42703' });
        expect(failed.at(-1)).toMatchObject({ status: 'E' });
        const ignored = await run('SELECT 1');
        expect(namesOf(ignored)).toEqual(['error', 'readyForQuery']);
        expect(ignored[0]).toMatchObject({
          code: '25P02',
          message: 'current transaction is aborted, commands ignored until end of transaction block',
        });
        expect(ignored.at(-1)).toMatchObject({ status: 'E' });
        const rolledBack = await run('ROLLBACK');
        expect(rolledBack).toEqual([
          expect.objectContaining({ name: 'commandComplete', text: 'ROLLBACK' }),
          expect.objectContaining({ name: 'readyForQuery', status: 'I' }),
        ]);
        expect(rowsOf(await run('SELECT 3 AS n'))).toEqual([['3']]);
      } finally {
        raw.destroy();
      }
    });

    it('runs BEGIN; …; COMMIT in one simple query and warns on ROLLBACK that writes stay applied', async () => {
      const committed = await noticesDuring(c, () => c.query('BEGIN; SELECT 5 AS n; COMMIT'));
      const results = committed.result as unknown as pg.QueryResult[];
      expect(results.map((r) => r.command)).toEqual(['BEGIN', 'SELECT', 'COMMIT']);
      expect(results[1]!.rows).toEqual([{ n: 5 }]);
      expect(committed.notices).toEqual([]);

      await c.query('BEGIN');
      await c.query('CREATE PROJECT kept_after_rollback');
      const rolledBack = await noticesDuring(c, () => c.query('ROLLBACK'));
      expect(rolledBack.notices).toEqual([
        {
          severity: 'WARNING',
          code: '01000',
          message:
            '1 statement(s) since BEGIN stay applied: every statement here is its own transaction, which ROLLBACK cannot undo',
        },
      ]);
      const projects = (await front.app.http.get('/api/projects').expect(200)).body as { name: string }[];
      expect(projects.map((p) => p.name)).toContain('kept_after_rollback');
    });
  });

  describe('given writes', () => {
    it('creates a skill visible over HTTP, its event in the log recorded as coming through postgres', async () => {
      await front.app.http.post('/api/projects').send({ name: 'door' }).expect(201);
      const created = await c.query("CREATE SKILL door.s USING type = 'custom', params = {}");
      expect(created.command).toBe('CREATE');
      const skills = (await front.app.http.get('/api/projects/door/skills').expect(200)).body as unknown[];
      expect(skills).toEqual([expect.objectContaining({ name: 's', type: 'custom' })]);
      const events = await querySql(
        front.app,
        "SELECT TYPE, INTERFACE FROM information_schema.EVENTS WHERE STREAM = 'project-door' ORDER BY GLOBAL_POSITION",
      );
      expect(events.data).toEqual([
        ['ProjectCreated', 'rest'],
        ['SkillCreated', 'postgres'],
      ]);
    });
  });

  describe('given large results', () => {
    it('streams a 100,000-row result whole', async () => {
      const { result, notices } = await noticesDuring(c, () =>
        c.query({ text: 'SELECT * FROM range(100000)', rowMode: 'array' }),
      );
      expect(result.rowCount).toBe(100000);
      expect(result.rows).toHaveLength(100000);
      expect(result.rows[0]).toEqual(['0']);
      expect(result.rows[99999]).toEqual(['99999']);
      expect(notices).toEqual([]);
    });

    it('cuts a result at SQL_ROW_LIMIT and says so in a WARNING notice', async () => {
      const { result, notices } = await noticesDuring(c, () =>
        c.query({ text: 'SELECT * FROM range(100001)', rowMode: 'array' }),
      );
      expect(result.rows).toHaveLength(100000);
      expect(result.rows.at(-1)).toEqual(['99999']);
      expect(notices).toEqual([
        {
          severity: 'WARNING',
          code: '01000',
          message:
            "the result was cut at 100000 rows (the server's row limit, SQL_ROW_LIMIT, or its answer size limit)",
        },
      ]);
    });
  });

  describe('given the extended protocol by hand', () => {
    let raw: RawPg;
    beforeEach(async () => {
      raw = await RawPg.connect(front.port);
    });
    afterEach(() => raw.destroy());

    it('hands out a portal in pieces of Execute maxRows, PortalSuspended between, then the rest', async () => {
      raw.send(
        serialize.parse({ name: 'five', text: 'SELECT i FROM range(5) t(i)' }),
        serialize.bind({ statement: 'five', portal: 'p' }),
        serialize.describe({ type: 'P', name: 'p' }),
        serialize.execute({ portal: 'p', rows: 2 }),
        serialize.flush(),
      );
      const first = await raw.until('portalSuspended');
      expect(namesOf(first)).toEqual([
        'parseComplete',
        'bindComplete',
        'rowDescription',
        'dataRow',
        'dataRow',
        'portalSuspended',
      ]);
      expect(rowsOf(first)).toEqual([['0'], ['1']]);
      raw.send(serialize.execute({ portal: 'p', rows: 2 }), serialize.flush());
      const second = await raw.until('portalSuspended');
      expect(rowsOf(second)).toEqual([['2'], ['3']]);
      raw.send(serialize.execute({ portal: 'p', rows: 2 }), serialize.sync());
      const last = await raw.until('readyForQuery');
      expect(namesOf(last)).toEqual(['dataRow', 'commandComplete', 'readyForQuery']);
      expect(rowsOf(last)).toEqual([['4']]);
    });

    it("ends a portal's last Execute with the rows that Execute sent (SELECT 1, not 3), as PostgreSQL does", async () => {
      raw.send(
        serialize.parse({ text: 'SELECT i FROM range(3) t(i)' }),
        serialize.bind({ portal: 'p' }),
        serialize.execute({ portal: 'p', rows: 2 }),
        serialize.execute({ portal: 'p', rows: 2 }),
        serialize.sync(),
      );
      const messages = await raw.until('readyForQuery');
      expect(namesOf(messages)).toEqual([
        'parseComplete',
        'bindComplete',
        'dataRow',
        'dataRow',
        'portalSuspended',
        'dataRow',
        'commandComplete',
        'readyForQuery',
      ]);
      expect(messages.find((m) => m.name === 'commandComplete')).toMatchObject({ text: 'SELECT 1' });
    });

    it('describes a statement: its parameters (declared, else text) and its columns', async () => {
      raw.send(
        serialize.parse({ name: 'd', text: 'SELECT $1::INTEGER + 1 AS n, $2 AS s', types: [23] }),
        serialize.describe({ type: 'S', name: 'd' }),
        serialize.sync(),
      );
      const messages = await raw.until('readyForQuery');
      expect(messages).toEqual([
        expect.objectContaining({ name: 'parseComplete' }),
        expect.objectContaining({ name: 'parameterDescription', dataTypeIDs: [23, 25] }),
        expect.objectContaining({
          name: 'rowDescription',
          fields: [
            expect.objectContaining({ name: 'n', dataTypeID: 23 }),
            expect.objectContaining({ name: 's', dataTypeID: 25 }),
          ],
        }),
        expect.objectContaining({ name: 'readyForQuery', status: 'I' }),
      ]);
    });

    it('answers the errors PostgreSQL answers: a name taken, parameters miscounted, a statement closed', async () => {
      raw.send(
        serialize.parse({ name: 'q', text: 'SELECT $1 AS a, $2 AS b' }),
        serialize.parse({ name: 'q', text: 'SELECT 1' }),
        serialize.sync(),
      );
      const taken = await raw.until('readyForQuery');
      expect(namesOf(taken)).toEqual(['parseComplete', 'error', 'readyForQuery']);
      expect(taken[1]).toMatchObject({ code: '42P05', message: 'prepared statement "q" already exists' });

      raw.send(serialize.bind({ statement: 'q', values: ['only one'] }), serialize.sync());
      const miscounted = await raw.until('readyForQuery');
      expect(miscounted[0]).toMatchObject({
        code: '08P01',
        message: 'bind message supplies 1 parameters, but prepared statement "q" requires 2',
      });

      raw.send(
        serialize.close({ type: 'S', name: 'q' }),
        serialize.bind({ statement: 'q', values: ['a', 'b'] }),
        serialize.execute({}),
        serialize.sync(),
      );
      const closed = await raw.until('readyForQuery');
      // After the error, Execute is skipped: nothing more until Sync.
      expect(namesOf(closed)).toEqual(['closeComplete', 'error', 'readyForQuery']);
      expect(closed[1]).toMatchObject({ code: '26000', message: 'prepared statement "q" does not exist' });
    });
  });

  describe('given a query running for long', () => {
    it('cancels it on a CancelRequest naming its process and secret: 57014, and the connection answers the next query', async () => {
      const victim = await front.connect();
      const { processID, secretKey } = victim as unknown as { processID: number; secretKey: number };
      const outcome = failureOf(victim.query(endlessQuery('cancel-me')));
      await eventually(() => front.calls.some((call) => call.query.includes("'cancel-me'")));
      const call = front.calls.find((x) => x.query.includes("'cancel-me'"))!;

      // A wrong secret cancels nothing.
      await sendCancelRequest(front.port, processID, secretKey ^ 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(call.signal!.aborted).toBe(false);

      await sendCancelRequest(front.port, processID, secretKey);
      expect(await outcome).toMatchObject({
        severity: 'ERROR',
        code: '57014',
        message: 'canceling statement due to user request',
      });
      expect(call.signal!.aborted).toBe(true);
      expect((await victim.query("SELECT 'after the cancel' AS x")).rows).toEqual([
        { x: 'after the cancel' },
      ]);
    });
  });
});
