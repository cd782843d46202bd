import fc from 'fast-check';
import { columnOf } from '../../src/mysql/protocol/columns';
import { writeTextCell, writeBinaryCell } from '../../src/mysql/protocol/cells';
import { ColumnType } from '../../src/mysql/protocol/constants';
import { PacketReader, PacketTooLarge } from '../../src/mysql/protocol/packetReader';
import { PacketWriter } from '../../src/mysql/protocol/packetWriter';
import { PayloadReader } from '../../src/mysql/protocol/payloadReader';
import { nativeToken, sha2Digest, sha2FastMatches } from '../../src/mysql/protocol/auth';
import { readParams } from '../../src/mysql/protocol/params';
import { classify } from '../../src/mysql/session/classify';
import { namePlaceholders, splitStatements } from '../../src/mysql/session/clientText';
import { likeMatcher } from '../../src/mysql/session/like';
import { substituteConnectionValues } from '../../src/mysql/session/substitute';
import crypto from 'node:crypto';
import path from 'node:path';

const packetsOf = (bytes: Buffer) => {
  const reader = new PacketReader();
  reader.feed(bytes);
  const out = [];
  for (let p = reader.read(); p; p = reader.read()) out.push(p);
  return out;
};

describe('packet framing', () => {
  it('numbers packets in sequence and reads them back, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 50 }),
        (payloads, chunk) => {
          const w = new PacketWriter(16);
          for (const p of payloads) w.begin().bytes(p).end();
          const bytes = w.take();
          const reader = new PacketReader();
          const got: { sequence: number; payload: Buffer }[] = [];
          for (let at = 0; at < bytes.length; at += chunk) {
            reader.feed(bytes.subarray(at, at + chunk));
            for (let p = reader.read(); p; p = reader.read()) got.push(p);
          }
          expect(got.map((p) => p.sequence)).toEqual(payloads.map((_p, i) => i));
          expect(got.map((p) => [...p.payload])).toEqual(payloads.map((p) => [...p]));
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });

  it('splits a payload of 2^24 - 1 bytes or more into packets and joins them on reading', () => {
    const payload = crypto.randomBytes(0xffffff + 10);
    const w = new PacketWriter();
    w.begin().bytes(payload).end();
    const bytes = w.take();
    // Two packets: a full one and the 10 remaining bytes.
    expect(bytes.readUIntLE(0, 3)).toBe(0xffffff);
    expect(bytes.readUIntLE(4 + 0xffffff, 3)).toBe(10);
    const [packet, ...rest] = packetsOf(bytes);
    expect(rest).toEqual([]);
    expect(packet!.payload.equals(payload)).toBe(true);
    expect(packet!.sequence).toBe(1);
  });

  it('refuses a payload over its limit from the header alone, before the bytes arrive', () => {
    const reader = new PacketReader(1000);
    reader.feed(Buffer.from([0xe9, 0x03, 0x00, 0x00])); // 1001 bytes announced
    expect(() => reader.read()).toThrow(PacketTooLarge);
    const fits = new PacketReader(1000);
    fits.feed(Buffer.from([0xe8, 0x03, 0x00, 0x00]));
    expect(fits.read()).toBeUndefined();
    fits.feed(Buffer.alloc(1000, 7));
    expect(fits.read()!.payload).toEqual(Buffer.alloc(1000, 7));
  });

  it('keeps the packets it handed out intact while more bytes arrive', () => {
    const w = new PacketWriter();
    w.begin().bytes(Buffer.from('first')).end();
    w.begin().bytes(Buffer.alloc(200_000, 1)).end();
    const bytes = w.take();
    const reader = new PacketReader();
    reader.feed(bytes.subarray(0, 20));
    const first = reader.read()!.payload;
    for (let at = 20; at < bytes.length; at += 1000) reader.feed(bytes.subarray(at, at + 1000));
    expect(first.toString()).toBe('first');
    expect(reader.read()!.payload).toEqual(Buffer.alloc(200_000, 1));
  });

  it('leaves the bytes after a packet raw (a TLS handshake following the SSL request)', () => {
    const w = new PacketWriter();
    w.begin().bytes(Buffer.from('ssl request')).end();
    const reader = new PacketReader();
    reader.feed(Buffer.concat([w.take(), Buffer.from([0x16, 0x03, 0x01])]));
    expect(reader.read()!.payload.toString()).toBe('ssl request');
    expect([...reader.takeRest()]).toEqual([0x16, 0x03, 0x01]);
  });

  it('writes length-encoded integers and strings as MySQL reads them', () => {
    const w = new PacketWriter();
    w.begin()
      .lenenc(250)
      .lenenc(251)
      .lenenc(70000)
      .lenenc(2 ** 24 + 1)
      .lenencString('é'.repeat(200))
      .end();
    const r = new PayloadReader(packetsOf(w.take())[0]!.payload);
    expect([r.lenenc(), r.lenenc(), r.lenenc(), r.lenenc()]).toEqual([250, 251, 70000, 2 ** 24 + 1]);
    expect(r.lenencBytes().toString('utf8')).toBe('é'.repeat(200));
    expect(r.remaining).toBe(0);
  });
});

describe('statements of a multi-statement text', () => {
  it('splits at semicolons outside literals, quoted names and comments', () => {
    expect(
      splitStatements('SELECT \'a;b\'; SELECT `x;y` FROM t -- c;d\n; /* e;f */ SELECT "g;h";;  '),
    ).toEqual(["SELECT 'a;b'", ' SELECT `x;y` FROM t -- c;d\n', ' /* e;f */ SELECT "g;h"']);
  });

  it('gives back the statements it was made of (property)', () => {
    const literal = fc.oneof(
      fc
        .string({ unit: fc.constantFrom('a', ';', '?', ' ', "''", '"', '`') })
        .map((s) => `'${s.replace(/'/g, "''")}'`),
      fc.string({ unit: fc.constantFrom('b', ';', '?', "'") }).map((s) => `\`${s.replace(/`/g, '``')}\``),
      fc.constantFrom('x', '1', '?', '/* ; */', '-- ;\n'),
    );
    const statement = fc
      .array(literal, { minLength: 1, maxLength: 5 })
      .map((parts) => `SELECT ${parts.join(' ')}`);
    fc.assert(
      fc.property(fc.array(statement, { minLength: 1, maxLength: 5 }), (statements) => {
        expect(splitStatements(statements.join(';'))).toEqual(statements);
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('ends literals where MySQL does: a backslash-escaped quote stays inside, # starts a comment', () => {
    expect(splitStatements('SELECT \'it\\\'s; fine\', "a\\";b"; # c;d\nSELECT 2;')).toEqual([
      'SELECT \'it\\\'s; fine\', "a\\";b"',
      ' # c;d\nSELECT 2',
    ]);
  });

  it('keeps the statements before a quote never closed, and the rest as one last statement for the engine', () => {
    expect(splitStatements("SELECT 1; SELECT 'open; SELECT 3")).toEqual([
      'SELECT 1',
      " SELECT 'open; SELECT 3",
    ]);
    expect(namePlaceholders("SELECT ? FROM t WHERE a = 'open ?")).toEqual({
      sql: "SELECT :__mysql_param_1 FROM t WHERE a = 'open ?",
      count: 1,
    });
    expect(classify("SHOW VARIABLES LIKE 'open")).toEqual({
      kind: 'engine',
      sql: "SHOW VARIABLES LIKE 'open",
    });
  });

  it('names each ? outside literals for the engine, in order', () => {
    expect(namePlaceholders("SELECT ?, '?', `?` FROM t WHERE a = ? -- ?\n")).toEqual({
      sql: "SELECT :__mysql_param_1, '?', `?` FROM t WHERE a = :__mysql_param_2 -- ?\n",
      count: 2,
    });
  });
});

describe('what the connection answers itself', () => {
  it('recognises the connection SELECTs tools send, with their column names', () => {
    expect(classify('SELECT @@version_comment LIMIT 1')).toEqual({
      kind: 'connectionSelect',
      items: [{ expression: { kind: 'variable', name: '@@version_comment' }, name: '@@version_comment' }],
      noRows: false,
    });
    const jdbc = classify(
      'SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, DATABASE()',
    );
    expect(jdbc.kind === 'connectionSelect' && jdbc.items.map((i) => i.name)).toEqual([
      'auto_increment_increment',
      'character_set_client',
      'DATABASE()',
    ]);
  });

  it('leaves literal SELECTs, SHOWs it does not know and everything else to the engine', () => {
    for (const sql of [
      'SELECT 1',
      'SELECT @@version + 1',
      'SHOW TABLES',
      'SHOW DATABASES',
      'USE files',
      'DESCRIBE x',
    ])
      expect(classify(sql)).toEqual({ kind: 'engine', sql });
  });

  it('parses SHOW COLUMNS, SHOW CREATE TABLE, SHOW VARIABLES, KILL and SET', () => {
    expect(classify('SHOW FULL COLUMNS FROM `files`.`home rentals` LIKE "s%"')).toEqual({
      kind: 'showColumns',
      full: true,
      table: 'home rentals',
      db: 'files',
      like: 's%',
      where: undefined,
    });
    expect(classify('SHOW CREATE TABLE mindsdb.models')).toEqual({
      kind: 'showCreateTable',
      table: 'models',
      db: 'mindsdb',
    });
    expect(classify("SHOW SESSION VARIABLES WHERE Variable_name = 'x'")).toEqual({
      kind: 'showVariables',
      like: undefined,
      where: "Variable_name = 'x'",
    });
    expect(classify('KILL QUERY 12')).toEqual({ kind: 'kill', scope: 'query', id: 12 });
    expect(classify('KILL 12')).toEqual({ kind: 'kill', scope: 'connection', id: 12 });
    expect(
      classify("SET NAMES utf8mb4 COLLATE 'utf8mb4_bin', @x = (1, 2), SESSION sql_mode = 'ANSI'"),
    ).toEqual({
      kind: 'set',
      assignments: [
        {
          text: "NAMES utf8mb4 COLLATE 'utf8mb4_bin'",
          assignment: { kind: 'names', charset: 'utf8mb4', collation: 'utf8mb4_bin' },
        },
        { text: '@x = (1, 2)', assignment: { kind: 'user', name: 'x', valueText: '(1, 2)' } },
        {
          text: "SESSION sql_mode = 'ANSI'",
          assignment: { kind: 'system', name: 'sql_mode', valueText: "'ANSI'" },
        },
      ],
    });
  });

  it('writes connection values into other statements, keeping MySQL column names in select lists', () => {
    const values = { '@@version': "8.0'x", DATABASE: 'files' } as Record<string, string>;
    const out = substituteConnectionValues(
      "SELECT @@version, upper(DATABASE()), DATABASE() FROM t WHERE s = DATABASE() AND u = @u AND v = '@@version'",
      (e) => {
        const key = e.kind === 'variable' ? e.name : e.kind === 'function' ? e.name : '';
        return key in values ? { value: values[key]! } : undefined;
      },
    );
    expect(out).toEqual({
      sql: "SELECT '8.0''x' AS `@@version`, upper('files'), 'files' AS `DATABASE()` FROM t WHERE s = 'files' AND u = @u AND v = '@@version'",
      userVariables: ['u'],
    });
  });

  it("matches LIKE as MySQL: case-insensitive, % and _, backslash escapes (Connector/J's character\\_set%)", () => {
    const like = likeMatcher('character\\_set%');
    expect(['character_set_client', 'CHARACTER_SET', 'characterXset'].map(like)).toEqual([true, true, false]);
    expect(likeMatcher('v_rsion')('version')).toBe(true);
  });
});

describe('columns typed from DuckDB types', () => {
  const text = (duckType: string, cell: unknown) => {
    const w = new PacketWriter();
    w.begin();
    writeTextCell(w, columnOf('c', duckType), cell);
    w.end();
    const r = new PayloadReader(packetsOf(w.take())[0]!.payload);
    const n = r.lenenc();
    return n === null ? null : r.bytes(n).toString('utf8');
  };

  it('maps each DuckDB type to the MySQL type drivers decode it by', () => {
    const types = Object.fromEntries(
      [
        'TINYINT',
        'SMALLINT',
        'INTEGER',
        'BIGINT',
        'UBIGINT',
        'HUGEINT',
        'DECIMAL(10,2)',
        'FLOAT',
        'DOUBLE',
        'BOOLEAN',
        'DATE',
        'TIMESTAMP',
        'TIMESTAMP WITH TIME ZONE',
        'TIME',
        'VARCHAR',
        'UUID',
        'BLOB',
        'INTEGER[]',
        'STRUCT("x" INTEGER)',
        'MAP(VARCHAR, INTEGER)',
        'JSON',
        'INTERVAL',
      ].map((t) => [t, columnOf('c', t).type]),
    );
    expect(types).toEqual({
      TINYINT: ColumnType.TINY,
      SMALLINT: ColumnType.SHORT,
      INTEGER: ColumnType.LONG,
      BIGINT: ColumnType.LONGLONG,
      UBIGINT: ColumnType.LONGLONG,
      HUGEINT: ColumnType.NEWDECIMAL,
      'DECIMAL(10,2)': ColumnType.NEWDECIMAL,
      FLOAT: ColumnType.FLOAT,
      DOUBLE: ColumnType.DOUBLE,
      BOOLEAN: ColumnType.TINY,
      DATE: ColumnType.DATE,
      TIMESTAMP: ColumnType.DATETIME,
      'TIMESTAMP WITH TIME ZONE': ColumnType.DATETIME,
      TIME: ColumnType.TIME,
      VARCHAR: ColumnType.VAR_STRING,
      UUID: ColumnType.VAR_STRING,
      BLOB: ColumnType.BLOB,
      'INTEGER[]': ColumnType.JSON,
      'STRUCT("x" INTEGER)': ColumnType.JSON,
      'MAP(VARCHAR, INTEGER)': ColumnType.JSON,
      JSON: ColumnType.JSON,
      INTERVAL: ColumnType.VAR_STRING,
    });
  });

  it('writes text cells as MySQL prints them', () => {
    expect(text('DECIMAL(10,2)', 1.5)).toBe('1.50');
    expect(text('DOUBLE', 1e300)).toBe('1e300');
    expect(text('BIGINT', '9007199254740993')).toBe('9007199254740993');
    expect(text('BIGINT', 2n ** 63n - 1n)).toBe('9223372036854775807');
    expect(text('DECIMAL(38,3)', '12345678901234567890.123')).toBe('12345678901234567890.123');
    expect(text('BOOLEAN', true)).toBe('1');
    expect(text('INTEGER[]', [1, 2])).toBe('[1,2]');
    expect(text('BLOB', Buffer.from('hi').toString('base64'))).toBe('hi');
    expect(text('INTERVAL', { months: 14, days: 1, micros: '3723000001' })).toBe(
      '1 year 2 months 1 day 01:02:03.000001',
    );
    expect(text('VARCHAR', null)).toBeNull();
  });

  it('writes binary integers, dates and timestamps in their fixed layouts', () => {
    const binary = (duckType: string, cell: unknown) => {
      const w = new PacketWriter();
      w.begin();
      writeBinaryCell(w, columnOf('c', duckType), cell);
      w.end();
      return [...packetsOf(w.take())[0]!.payload];
    };
    expect(binary('BIGINT', '-9007199254740993')).toEqual([...Buffer.from('ffffffffffffdfff', 'hex')]);
    expect(binary('SMALLINT', -2)).toEqual([0xfe, 0xff]);
    expect(binary('UBIGINT', 2n ** 64n - 1n)).toEqual(Array(8).fill(0xff));
    expect(binary('DATE', '2024-01-02')).toEqual([4, 0xe8, 0x07, 1, 2]);
    expect(binary('TIMESTAMP', '2024-01-02 03:04:05.500000')).toEqual([
      11, 0xe8, 0x07, 1, 2, 3, 4, 5, 0x20, 0xa1, 0x07, 0,
    ]);
    expect(binary('TIME', '01:02:03')).toEqual([8, 0, 0, 0, 0, 0, 1, 2, 3]);
  });
});

describe('prepared statement parameters', () => {
  it('reads typed values, NULLs and long data as the engine takes them', () => {
    const w = new PacketWriter();
    w.begin()
      .int1(0b0000_0100) // NULL bitmap: the third parameter
      .int1(1)
      .int1(ColumnType.LONGLONG)
      .int1(0)
      .int1(ColumnType.VAR_STRING)
      .int1(0)
      .int1(ColumnType.NULL)
      .int1(0)
      .int1(ColumnType.DATETIME)
      .int1(0)
      .int1(ColumnType.BLOB)
      .int1(0)
      .int8(9007199254740993n)
      .lenencString('héllo')
      .int1(7)
      .int2(2024)
      .int1(1)
      .int1(2)
      .int1(3)
      .int1(4)
      .int1(5)
      .end();
    const r = new PayloadReader(packetsOf(w.take())[0]!.payload);
    const long = new Map([[4, [Buffer.from('long '), Buffer.from('data')]]]);
    expect(readParams(r, 5, undefined, long).values).toEqual([
      '9007199254740993',
      'héllo',
      null,
      '2024-01-02 03:04:05',
      'long data',
    ]);
  });
});

/** A file of the mysql2 client (its package exports do not list its auth code). */
const mysql2File = (file: string) => path.join(path.dirname(require.resolve('mysql2')), file);

describe('authentication scrambles', () => {
  const nonce = Buffer.from('abcdefghijklmnopqrst');

  it("computes mysql_native_password's token as clients do (mysql2's auth_41)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const auth41 = require(mysql2File('lib/auth_41.js')) as {
      calculateToken(password: string, a: Buffer, b: Buffer): Buffer;
    };
    expect(
      nativeToken('secret', nonce).equals(
        auth41.calculateToken('secret', nonce.subarray(0, 8), nonce.subarray(8)),
      ),
    ).toBe(true);
  });

  it("accepts caching_sha2_password's fast token for the right password only", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sha2 = require(mysql2File('lib/auth_plugins/caching_sha2_password.js')) as {
      calculateToken(password: string, scramble: Buffer): Buffer;
    };
    const token = sha2.calculateToken('secret', nonce);
    expect(sha2FastMatches(token, sha2Digest('secret'), nonce)).toBe(true);
    expect(sha2FastMatches(token, sha2Digest('other'), nonce)).toBe(false);
  });
});
