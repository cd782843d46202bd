/**
 * Regression specs for the PostgreSQL door's review fixes (commit 0d5e2c5), each written as the
 * behaviour PostgreSQL's own server shows: the catalog shadow runs one SELECT and nothing smuggled
 * past it, large messages arrive, extended-protocol errors are flushed at once, a client gone stops
 * the statements after, savepoints and DISCARD ALL, function calls and unknown message types,
 * parameter checks, Describe without running, result formats, and wire logins limited per user.
 */
import type pg from 'pg';
import { serialize } from 'pg-protocol';
import type { CommandCompleteMessage, ReadyForQueryMessage } from 'pg-protocol/dist/messages';
import pino from 'pino';
import { CatalogRefusal, readsCatalog, ShadowCatalog } from '../../src/pgwire/catalog/shadowCatalog';
import { readStatements } from '../../src/pgwire/session/pgText';
import { startPgServer, type PgServer } from '../../src/pgwire';
import { sqlDoor, WireLoginLimiter } from '../../src/users/sqlDoors';
import { ADMIN, login, startAuthApp, userWithRole } from '../auth/support';
import type { TestApp } from '../support/app';
import {
  eventually,
  failureOf,
  namesOf,
  pgClient,
  RawPg,
  rowsOf,
  runPsql,
  startPgDoor,
  startPgFront,
  type PgFront,
  type RawMessage,
} from './support';

// ---- frontend messages pg-protocol's serializer does not write ----------------------------------

const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');

/** A typed frontend message: its type byte, its length, its body. */
const typed = (type: string | number, body: Buffer = Buffer.alloc(0)) =>
  Buffer.concat([
    Buffer.from([typeof type === 'number' ? type : type.charCodeAt(0)]),
    int32(body.length + 4),
    body,
  ]);

type BoundParam = { format: 0 | 1; value: Buffer | null };

/** Bind with every field explicit: each parameter's format, and any list of result formats. */
const bindMessage = (o: {
  portal?: string;
  statement?: string;
  params?: BoundParam[];
  resultFormats?: number[];
}) => {
  const params = o.params ?? [];
  const results = o.resultFormats ?? [];
  return typed(
    'B',
    Buffer.concat([
      cstring(o.portal ?? ''),
      cstring(o.statement ?? ''),
      int16(params.length),
      ...params.map((p) => int16(p.format)),
      int16(params.length),
      ...params.flatMap((p) => (p.value === null ? [int32(-1)] : [int32(p.value.length), p.value])),
      int16(results.length),
      ...results.map(int16),
    ]),
  );
};
const text = (value: string): BoundParam => ({ format: 0, value: Buffer.from(value, 'utf8') });
const binary = (value: Buffer): BoundParam => ({ format: 1, value });

/** FunctionCall ('F'): a function OID, no argument formats, no arguments, a text result. */
const functionCall = (oid: number) => typed('F', Buffer.concat([int32(oid), int16(0), int16(0), int16(0)]));

/** A simple Query, answered up to its ReadyForQuery. */
const ask = (raw: RawPg, sql: string) => {
  raw.send(serialize.query(sql));
  return raw.until('readyForQuery');
};

const errorsOf = (messages: RawMessage[]) => messages.filter((m) => m.name === 'error');
/** The transaction status of the ReadyForQuery ending an answer. */
const statusOf = (messages: RawMessage[]) =>
  messages.filter((m): m is ReadyForQueryMessage => m.name === 'readyForQuery').at(-1)?.status;
/** The CommandComplete tags of an answer. */
const tagsOf = (messages: RawMessage[]) =>
  messages.filter((m): m is CommandCompleteMessage => m.name === 'commandComplete').map((m) => m.text);

// ---- units ---------------------------------------------------------------------------------------

describe('routing a statement to the catalog shadow (readsCatalog over the words readStatements reads)', () => {
  const routed = (sql: string) => readsCatalog(readStatements(sql)[0]!.words);

  it.each([
    ['SELECT * FROM pg_class', true],
    ['SELECT * FROM pg_catalog.pg_namespace', true],
    ['SELECT 1 FROM t, pg_namespace', true],
    ['SELECT pg_catalog.version()', false],
    ['SELECT * FROM my_pg.pg_catalog.pg_tables', false],
    ['SELECT pg_type FROM t', false],
  ])('given %j, when routed, then it reads the catalog: %s', (sql, expected) => {
    expect(routed(sql)).toBe(expected);
  });
});

describe('the wire login limiter (failed logins per user name and per address in a window)', () => {
  it('given as many failures as the limit, then the user is blocked until the window has passed them, others never', () => {
    let now = 1_000_000;
    const limiter = new WireLoginLimiter({ limit: 2, wideLimit: 2, windowMs: 1000, now: () => now });
    limiter.failed('ann');
    expect(limiter.blocked('ann')).toBe(false);
    now += 100;
    limiter.failed('ann');
    expect(limiter.blocked('ann')).toBe(true);
    expect(limiter.blocked('bob')).toBe(false);
    // The first failure leaves the window: one remains, under the limit.
    now += 901;
    expect(limiter.blocked('ann')).toBe(false);
    limiter.failed('ann');
    expect(limiter.blocked('ann')).toBe(true);
    // Both left: free again.
    now += 1001;
    expect(limiter.blocked('ann')).toBe(false);
  });
});

// ---- over the wire ---------------------------------------------------------------------------------

describe('the PostgreSQL door after review (real engine, SQLite store)', () => {
  let front: PgFront;
  const raws: RawPg[] = [];
  const rawClient = async () => {
    const raw = await RawPg.connect(front.port);
    raws.push(raw);
    return raw;
  };

  beforeAll(async () => {
    // Queries of several MiB reach the engine (its own limit is 256 KiB by default).
    front = await startPgFront({ env: { SQL_MAX_QUERY_BYTES: String(16 * 1024 * 1024) } });
  }, 60_000);
  afterAll(async () => {
    for (const raw of raws) raw.destroy();
    await front.dispose();
  });

  describe('given a catalog query hiding a second statement', () => {
    const hiding = [
      [
        'a -- comment that DuckDB and PostgreSQL end at \\r (DROP SCHEMA pg_mindledger)',
        'SELECT 1 FROM pg_class --\r; DROP SCHEMA pg_mindledger CASCADE',
      ],
      [
        'a /* /* */ comment that nests (a macro replaced)',
        "SELECT 1 FROM pg_class /* /* */ ' */ ; CREATE OR REPLACE MACRO pg_mindledger.pg_get_userbyid(id) AS 'pwned'; SELECT 3 -- '",
      ],
    ];

    it.each(hiding)(
      'when it hides %s, then the door splits it as PostgreSQL does: the second statement goes to the engine, never to the catalog shadow, and psql \\dt still shows tables owned by mindledger',
      async (_, sql) => {
        // A server of its own: the catalog shadow is one per server, and this spec attacks it.
        const server = await startPgDoor(front.app);
        const raw = await RawPg.connect(server.port);
        raws.push(raw);
        try {
          const answer = await ask(raw, sql);
          const names = namesOf(answer);
          // The catalog SELECT is answered; the hidden statement is the engine's to refuse.
          expect(names[0]).toBe('rowDescription');
          expect(names).toContain('commandComplete');
          expect(names.slice(-2)).toEqual(['error', 'readyForQuery']);
          expect(answer.find((m) => m.name === 'error')).not.toMatchObject({ code: '0A000' });
          const listed = await runPsql(server.port, '\\dt');
          expect(listed.stderr).toBe('');
          expect(listed.code).toBe(0);
          const rows = listed.stdout
            .split('\n')
            .filter((l) => l.length > 0)
            .map((l) => l.split('|'));
          expect(rows).toContainEqual(['mindsdb', 'models', 'table', 'mindledger']);
          expect(rows.filter((r) => r[3] !== 'mindledger')).toEqual([]);
        } finally {
          raw.destroy();
          await server.close(0);
        }
      },
    );

    it.each(hiding)(
      'when the shadow itself is handed a text hiding %s, then DuckDB finds two statements and it is refused',
      async (_, sql) => {
        const shadow = new ShadowCatalog();
        try {
          await expect(
            shadow.answer(sql, [], { databases: ['mindsdb'], columns: [], views: [] }, 'mindsdb'),
          ).rejects.toThrow(new CatalogRefusal('a catalog query is one SELECT statement'));
          const owners = await shadow.answer(
            'SELECT DISTINCT pg_catalog.pg_get_userbyid(relowner) FROM pg_catalog.pg_class',
            [],
            {
              databases: ['mindsdb'],
              columns: [{ schema: 'mindsdb', table: 't', column: 'a', type: 'INTEGER' }],
              views: [],
            },
            'mindsdb',
          );
          expect(owners.rows).toEqual([['mindledger']]);
        } finally {
          await shadow.close();
        }
      },
    );
  });

  describe('given a query message larger than the 4 MiB pause threshold', () => {
    it('when sent through node-postgres, then it arrives whole and is answered', async () => {
      const c = await front.connect({ query_timeout: 15_000 });
      const size = 5 * 1024 * 1024;
      const { rows } = await c.query(`SELECT length('${'x'.repeat(size)}') AS n`);
      expect(rows).toEqual([{ n: String(size) }]);
    });
  });

  describe('given an extended-protocol error and no Sync yet', () => {
    it('when the client sends Flush, then the ErrorResponse arrives at once; Sync then gives ReadyForQuery I', async () => {
      const raw = await rawClient();
      raw.send(serialize.parse({ text: "SELECT 'never closed" }), serialize.flush());
      const flushed = await raw.until('error', 2000);
      expect(flushed).toEqual([
        expect.objectContaining({
          name: 'error',
          code: '42601',
          message: expect.stringMatching(/Unterminated ' quoted text/),
        }),
      ]);
      raw.send(serialize.sync());
      expect(await raw.until('readyForQuery')).toEqual([
        expect.objectContaining({ name: 'readyForQuery', status: 'I' }),
      ]);
    });

    it("when the engine refuses an Execute ('SELEC 1') before Flush, then its error arrives at once too", async () => {
      const raw = await rawClient();
      raw.send(
        serialize.parse({ text: 'SELEC 1' }),
        serialize.bind({}),
        serialize.execute({}),
        serialize.flush(),
      );
      const flushed = await raw.until('error', 2000);
      expect(namesOf(flushed)).toEqual(['parseComplete', 'bindComplete', 'error']);
      expect(flushed.at(-1)).toMatchObject({ severity: 'ERROR', code: '42601' });
      raw.send(serialize.sync());
      expect(await raw.until('readyForQuery')).toEqual([
        expect.objectContaining({ name: 'readyForQuery', status: 'I' }),
      ]);
    });
  });

  describe('given a client that leaves in the middle of a multi-statement query', () => {
    it('when its socket is gone while the first statement waits for it to read, then the statements after never reach the engine', async () => {
      const raw = await RawPg.connect(front.port);
      const before = front.server.connections() - 1;
      // The client reads nothing more: the server's writes back up and the first statement waits.
      raw.socket.pause();
      raw.send(
        serialize.query(
          "SELECT i, repeat('x', 600) AS pad, 'left-first' AS tag FROM range(3000000) t(i); SELECT 'ran-after-client-left' AS marker",
        ),
      );
      await eventually(() => front.calls.some((c) => c.query.includes("'left-first'")));
      await new Promise((r) => setTimeout(r, 500));
      raw.destroy();
      await eventually(() => front.server.connections() === before, 10_000);
      await new Promise((r) => setTimeout(r, 200));
      const queries = front.calls.map((c) => c.query);
      expect(queries.filter((q) => q.includes("'left-first'"))).toHaveLength(1);
      expect(queries.filter((q) => q.includes('ran-after-client-left'))).toEqual([]);
    });
  });

  describe('given a failed statement inside a savepoint', () => {
    it('when rolled back to the savepoint, then the block is usable again (T); COMMIT of a failed block says ROLLBACK', async () => {
      const raw = await rawClient();
      expect(statusOf(await ask(raw, 'BEGIN'))).toBe('T');
      expect(tagsOf(await ask(raw, 'SAVEPOINT a'))).toEqual(['SAVEPOINT']);

      const failed = await ask(raw, 'SELECT * FROM no_such_table_here');
      expect(namesOf(failed)).toEqual(['error', 'readyForQuery']);
      expect(statusOf(failed)).toBe('E');
      const ignored = await ask(raw, 'SELECT 1');
      expect(errorsOf(ignored)).toEqual([expect.objectContaining({ code: '25P02' })]);

      const rolledBack = await ask(raw, 'ROLLBACK TO SAVEPOINT a');
      expect(tagsOf(rolledBack)).toEqual(['ROLLBACK']);
      expect(statusOf(rolledBack)).toBe('T');
      const usable = await ask(raw, 'SELECT 1 AS n');
      expect(rowsOf(usable)).toEqual([['1']]);
      expect(statusOf(usable)).toBe('T');

      expect(statusOf(await ask(raw, 'SELECT * FROM no_such_table_here'))).toBe('E');
      const committed = await ask(raw, 'COMMIT');
      expect(errorsOf(committed)).toEqual([]);
      expect(tagsOf(committed)).toEqual(['ROLLBACK']);
      expect(statusOf(committed)).toBe('I');
    });
    it('when rolled back to a savepoint never made, then 3B001 and the block stays failed, as in PostgreSQL', async () => {
      const raw = await rawClient();
      await ask(raw, 'BEGIN');
      expect(statusOf(await ask(raw, 'SELECT * FROM no_such_table_here'))).toBe('E');
      const answer = await ask(raw, 'ROLLBACK TO SAVEPOINT never_made');
      expect(errorsOf(answer)).toEqual([
        expect.objectContaining({ code: '3B001', message: 'savepoint "never_made" does not exist' }),
      ]);
      expect(statusOf(answer)).toBe('E');
    });
  });

  describe('given DISCARD ALL', () => {
    it('when a named statement was prepared, then after DISCARD ALL its name can be prepared again', async () => {
      const raw = await rawClient();
      raw.send(serialize.parse({ name: 'S_1', text: 'SELECT 1 AS n' }), serialize.sync());
      expect(namesOf(await raw.until('readyForQuery'))).toEqual(['parseComplete', 'readyForQuery']);
      expect(tagsOf(await ask(raw, 'DISCARD ALL'))).toEqual(['DISCARD ALL']);

      raw.send(
        serialize.parse({ name: 'S_1', text: 'SELECT 2 AS n' }),
        serialize.bind({ statement: 'S_1' }),
        serialize.execute({}),
        serialize.sync(),
      );
      const again = await raw.until('readyForQuery');
      expect(errorsOf(again)).toEqual([]);
      expect(rowsOf(again)).toEqual([['2']]);
    });

    it('when application_name was SET, then DISCARD ALL reports it back to its default in a ParameterStatus', async () => {
      const raw = await rawClient();
      const set = await ask(raw, "SET application_name = 'x'");
      expect(set).toContainEqual(
        expect.objectContaining({
          name: 'parameterStatus',
          parameterName: 'application_name',
          parameterValue: 'x',
        }),
      );
      const discarded = await ask(raw, 'DISCARD ALL');
      expect(discarded).toContainEqual(
        expect.objectContaining({
          name: 'parameterStatus',
          parameterName: 'application_name',
          parameterValue: '',
        }),
      );
      expect(tagsOf(discarded)).toEqual(['DISCARD ALL']);
      expect(rowsOf(await ask(raw, 'SHOW application_name'))).toEqual([['']]);
    });

    it('when a parameter came in the startup packet, then DISCARD ALL keeps it (the session default), as in PostgreSQL', async () => {
      // JDBC sends extra_float_digits=3 at startup; pools (pgbouncer) send DISCARD ALL between clients.
      const raw = await RawPg.connect(front.port, { user: 'raw', extra_float_digits: '3' });
      raws.push(raw);
      expect(rowsOf(await ask(raw, 'SHOW extra_float_digits'))).toEqual([['3']]);
      expect(tagsOf(await ask(raw, 'DISCARD ALL'))).toEqual(['DISCARD ALL']);
      expect(rowsOf(await ask(raw, 'SHOW extra_float_digits'))).toEqual([['3']]);
    });

    it('when inside a transaction block, then it is refused with 25001', async () => {
      const raw = await rawClient();
      await ask(raw, 'BEGIN');
      const refused = await ask(raw, 'DISCARD ALL');
      expect(errorsOf(refused)).toEqual([
        expect.objectContaining({
          code: '25001',
          message: 'DISCARD ALL cannot run inside a transaction block',
        }),
      ]);
      expect(statusOf(refused)).toBe('E');
    });
  });

  describe('given messages outside what is served', () => {
    it('when a FunctionCall arrives, then it is answered 0A000 and ReadyForQuery with no Sync', async () => {
      const raw = await rawClient();
      raw.send(functionCall(1598));
      const answer = await raw.until('readyForQuery', 2000);
      expect(answer).toEqual([
        expect.objectContaining({
          name: 'error',
          code: '0A000',
          message: 'the function call protocol is not supported',
        }),
        expect.objectContaining({ name: 'readyForQuery', status: 'I' }),
      ]);
      expect(rowsOf(await ask(raw, 'SELECT 1 AS n'))).toEqual([['1']]);
    });

    it('when CopyData arrives outside a COPY, then it is ignored', async () => {
      const raw = await rawClient();
      raw.send(typed('d', Buffer.from('1\t2\n')));
      const answer = await ask(raw, 'SELECT 1 AS n');
      expect(namesOf(answer)).toEqual(['rowDescription', 'dataRow', 'commandComplete', 'readyForQuery']);
    });

    it.each([
      ["'W'", 'W', 87],
      ['0x01', 0x01, 1],
    ])(
      'when a message of unknown type %s arrives, then FATAL 08P01 and the connection ends',
      async (_, type, code) => {
        const raw = await rawClient();
        raw.send(typed(type));
        expect(await raw.rest(5000)).toEqual([
          expect.objectContaining({
            name: 'error',
            severity: 'FATAL',
            code: '08P01',
            message: `invalid frontend message type ${code}`,
          }),
        ]);
      },
    );
  });

  describe('given parameters the door cannot take', () => {
    const bound = async (sql: string, types: number[], param: BoundParam) => {
      const raw = await rawClient();
      raw.send(
        serialize.parse({ text: sql, types }),
        bindMessage({ params: [param] }),
        serialize.execute({}),
        serialize.sync(),
      );
      const answer = await raw.until('readyForQuery');
      expect(namesOf(answer)).toEqual(['parseComplete', 'error', 'readyForQuery']);
      return answer[1];
    };

    it.each([
      ['in text', text('\\xdeadbeef')],
      ['in binary', binary(Buffer.from([0xde, 0xad, 0xbe, 0xef]))],
    ])(
      'when a parameter declared bytea (OID 17) is sent %s, then Bind is refused 0A000 naming bytea',
      async (_, param) => {
        expect(await bound('SELECT $1 AS b', [17], param)).toMatchObject({
          code: '0A000',
          message: expect.stringContaining('bytea parameters are not supported'),
        });
      },
    );

    it('when node-postgres sends a Buffer (binary, type left unspecified), then it is refused 0A000, not passed on as text', async () => {
      const c = await front.connect();
      expect(
        await failureOf(c.query('SELECT $1::bytea AS b', [Buffer.from([0xde, 0xad, 0xbe, 0xef])])),
      ).toMatchObject({
        code: '0A000',
        message:
          'binary format is not supported for parameters of type unspecified (0); ask for text format (0)',
      });
    });

    it("when an int4 parameter's text is 'abc', then 22P02 invalid input syntax for type integer", async () => {
      expect(await bound('SELECT $1::int AS n', [23], text('abc'))).toMatchObject({
        code: '22P02',
        message: 'invalid input syntax for type integer: "abc"',
      });
    });

    it("when a boolean parameter's text is 'maybe', then 22P02 invalid input syntax for type boolean", async () => {
      expect(await bound('SELECT $1 AS b', [16], text('maybe'))).toMatchObject({
        code: '22P02',
        message: 'invalid input syntax for type boolean: "maybe"',
      });
    });

    it('when a binary int4 parameter has 2 bytes, then 08P01', async () => {
      expect(await bound('SELECT $1 AS n', [23], binary(Buffer.from([0, 7])))).toMatchObject({
        // PostgreSQL: bytes missing are "insufficient data left in message".
        code: '08P01',
        message: expect.stringContaining('insufficient data left in message: 2 bytes for a value of 4'),
      });
    });
  });

  describe('given Describe of a prepared statement', () => {
    it('when described, then the engine is asked for its columns under LIMIT 0, not to run it', async () => {
      const raw = await rawClient();
      const from = front.calls.length;
      raw.send(
        serialize.parse({ name: 'S', text: 'SELECT * FROM range(10) t(described_only)' }),
        serialize.describe({ type: 'S', name: 'S' }),
        serialize.sync(),
      );
      const answer = await raw.until('readyForQuery');
      expect(namesOf(answer)).toEqual([
        'parseComplete',
        'parameterDescription',
        'rowDescription',
        'readyForQuery',
      ]);
      expect(answer[2]).toMatchObject({ fields: [expect.objectContaining({ name: 'described_only' })] });
      const described = front.calls.slice(from).filter((c) => c.query.includes('described_only'));
      expect(described.length).toBeGreaterThan(0);
      for (const call of described) expect(call.query).toContain('LIMIT 0');
    });
  });

  describe('given Bind asking more result formats than the query has columns', () => {
    it('when executed, then 08P01 says how many formats and columns', async () => {
      const raw = await rawClient();
      raw.send(
        serialize.parse({ text: 'SELECT 1 AS n' }),
        bindMessage({ resultFormats: [0, 1] }),
        serialize.describe({ type: 'P', name: '' }),
        serialize.execute({}),
        serialize.sync(),
      );
      const answer = await raw.until('readyForQuery');
      expect(namesOf(answer)).toEqual(['parseComplete', 'bindComplete', 'error', 'readyForQuery']);
      expect(answer[2]).toMatchObject({
        code: '08P01',
        message: 'bind message has 2 result formats but query has 1 columns',
      });
    });
  });
});

describe('the PostgreSQL door with authentication on and a wire login limiter', () => {
  let t: TestApp;
  let server: PgServer;
  const clients: pg.Client[] = [];
  let analyst: { name: string; password: string };
  let editor: { name: string; password: string };

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    const admin = await login(t, ADMIN.name, ADMIN.password);
    analyst = await userWithRole(t, admin, 'limited_analyst', 'analyst');
    editor = await userWithRole(t, admin, 'other_editor', 'editor');
    // As src/main.ts builds it: one limiter for the doors, here 3 failures a minute.
    const limiter = new WireLoginLimiter({ limit: 3, windowMs: 60_000 });
    const door = sqlDoor(t.running.services.users, t.running.sql, true, 'postgres', limiter);
    server = await startPgServer({
      engine: door.engine,
      auth: door.auth,
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await server.close(0);
    await t.dispose();
  });

  const connect = (user: string, password: string) => pgClient(server.port, { user, password }, clients);

  it('given 3 wrong passwords for a user, when the right one comes, then it is refused too, saying why (issue 57: not another user from the same address)', async () => {
    for (let i = 0; i < 3; i++)
      expect(await failureOf(connect(analyst.name, `wrong-${i}`))).toMatchObject({
        severity: 'FATAL',
        code: '28P01',
        message: `password authentication failed for user "${analyst.name}"`,
      });
    expect(await failureOf(connect(analyst.name, analyst.password))).toMatchObject({
      severity: 'FATAL',
      code: '28000',
      message: expect.stringMatching(
        new RegExp(`^too many failed sign-ins from this address for user ${analyst.name}, retry after `),
      ),
    });
    // Another user of the address still signs in (issue 57, defect 8).
    await connect(editor.name, editor.password);
    // The user name counts whatever its case.
    expect(await failureOf(connect(analyst.name.toUpperCase(), analyst.password))).toMatchObject({
      code: '28000',
    });
  });
});
