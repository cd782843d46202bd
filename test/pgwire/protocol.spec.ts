/**
 * The protocol on bytes alone: frontend messages framed and decoded (src/pgwire/protocol/frontend.ts),
 * backend messages written (backend.ts, messageWriter.ts) and read back by node-postgres's own
 * parser, DuckDB types as PostgreSQL types (types.ts) and the engine's error codes as SQLSTATEs.
 * Messages are made by pg-protocol's serializer where it can make them: another implementation's bytes.
 */
import fc from 'fast-check';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';
import { sqlStateOf } from '../../src/pgwire/errors';
import {
  commandComplete,
  errorResponse,
  noticeResponse,
  readyForQuery,
  rowDescription,
} from '../../src/pgwire/protocol/backend';
import {
  decodeMessage,
  decodeStartup,
  FrameReader,
  ProtocolViolation,
  type FrontendMessage,
} from '../../src/pgwire/protocol/frontend';
import { MessageWriter } from '../../src/pgwire/protocol/messageWriter';
import { BinaryUnsupported, binaryCell, pgTypeOf, textCell } from '../../src/pgwire/protocol/types';

const SEED = 20261126;

/** A typed message's parts: its type byte and its body (what follows the length). */
const split = (message: Buffer) => ({ type: message[0]!, body: message.subarray(5) });
const decoded = (message: Buffer): FrontendMessage => {
  const { type, body } = split(message);
  return decodeMessage(type, body);
};
/** A startup-phase packet's body (what follows the length). */
const startupBody = (packet: Buffer) => packet.subarray(4);

/** What node-postgres's parser reads off bytes the server would send. */
const parsedByPg = (bytes: Buffer): BackendMessage[] => {
  const out: BackendMessage[] = [];
  new Parser().parse(bytes, (m) => out.push(m));
  return out;
};

describe('framing a client byte stream (FrameReader)', () => {
  /** A frontend message: a type letter and a body of any bytes. */
  const message = fc.record({
    type: fc.constantFrom(...'QPBDECSHXpF'.split('')),
    body: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  });
  const encode = (m: { type: string; body: Buffer }) => {
    const head = Buffer.alloc(5);
    head[0] = m.type.charCodeAt(0);
    head.writeInt32BE(m.body.length + 4, 1);
    return Buffer.concat([head, m.body]);
  };
  const startupParams = fc.dictionary(
    fc.stringMatching(/^[a-z_]{1,12}$/).filter((k) => k !== '__proto__'),
    fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !s.includes('\u0000')),
    { maxKeys: 4 },
  );

  it('yields the same startup packet and messages whatever the chunk boundaries', () => {
    fc.assert(
      fc.property(
        startupParams,
        fc.array(message, { maxLength: 20 }),
        fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 30 }),
        (params, messages, cutPoints) => {
          const startup = serialize.startup({ user: 'u', ...params });
          const stream = Buffer.concat([startup, ...messages.map(encode)]);
          const cuts = [...new Set(cutPoints.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
          const chunks = [0, ...cuts, stream.length]
            .slice(1)
            .map((end, i, ends) => stream.subarray(i === 0 ? 0 : ends[i - 1], end));

          const reader = new FrameReader(1024);
          let startupSeen: Buffer | undefined;
          const seen: { type: string; body: Buffer }[] = [];
          for (const chunk of chunks) {
            reader.push(chunk);
            if (!startupSeen) startupSeen = reader.nextStartup();
            if (!startupSeen) continue;
            for (let m = reader.next(); m; m = reader.next())
              seen.push({ type: String.fromCharCode(m.type), body: Buffer.from(m.body) });
          }
          expect(startupSeen && decodeStartup(startupSeen)).toEqual({
            kind: 'startup',
            // pg-protocol's serializer adds client_encoding after the parameters it is given.
            params: { user: 'u', ...params, client_encoding: 'UTF8' },
            minorVersion: 0,
            protocolOptions: [],
          });
          expect(seen).toEqual(messages);
          expect(reader.takeRest().length).toBe(0);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('refuses a message announcing more than maxMessageBytes as soon as its length has arrived', () => {
    const reader = new FrameReader(100);
    const head = Buffer.alloc(5);
    head[0] = 'Q'.charCodeAt(0);
    head.writeInt32BE(4 + 101, 1);
    reader.push(head);
    expect(() => reader.next()).toThrow(
      new ProtocolViolation('message of 101 bytes is over the limit of 100'),
    );
  });

  it('takes a message of exactly maxMessageBytes', () => {
    const reader = new FrameReader(100);
    reader.push(serialize.query('x'.repeat(99)));
    expect(reader.next()).toMatchObject({ type: 'Q'.charCodeAt(0) });
  });

  it('refuses a length below 4 and a startup packet of an impossible length', () => {
    const typed = new FrameReader(100);
    typed.push(Buffer.from([0x51, 0, 0, 0, 3]));
    expect(() => typed.next()).toThrow(ProtocolViolation);
    const startup = new FrameReader(100);
    startup.push(Buffer.from([0, 0, 0, 4, 0, 3, 0, 0]));
    expect(() => startup.nextStartup()).toThrow(new ProtocolViolation('invalid startup packet length 4'));
  });
});

describe('decoding the first message (startup, SSL, cancel)', () => {
  it('reads a 3.0 startup packet with its parameters', () => {
    const packet = serialize.startup({
      user: 'analyst',
      database: 'sales',
      application_name: 'psql',
      options: '-c search_path=x',
    });
    expect(decodeStartup(startupBody(packet))).toEqual({
      kind: 'startup',
      params: {
        user: 'analyst',
        database: 'sales',
        application_name: 'psql',
        options: '-c search_path=x',
        client_encoding: 'UTF8',
      },
      minorVersion: 0,
      protocolOptions: [],
    });
  });

  it('reads a 3.1 startup packet: minor version 1, _pq_ options apart from the parameters', () => {
    const body = Buffer.concat([
      Buffer.from([0, 3, 0, 1]),
      Buffer.from('user\0u\0_pq_.compression\0on\0\0', 'utf8'),
    ]);
    expect(decodeStartup(body)).toEqual({
      kind: 'startup',
      params: { user: 'u' },
      minorVersion: 1,
      protocolOptions: ['_pq_.compression'],
    });
  });

  it('reads SSLRequest, CancelRequest, and an unknown protocol by its code', () => {
    expect(decodeStartup(startupBody(serialize.requestSsl()))).toEqual({ kind: 'ssl' });
    expect(decodeStartup(startupBody(serialize.cancel(4711, -123456)))).toEqual({
      kind: 'cancel',
      processId: 4711,
      secret: -123456,
    });
    expect(decodeStartup(Buffer.from([0, 2, 0, 0]))).toEqual({ kind: 'unsupported', code: 2 << 16 });
  });
});

describe('decoding typed messages', () => {
  it('reads a Bind with text and binary parameters, a NULL, and a result format for all columns', () => {
    const bind = serialize.bind({
      portal: 'p1',
      statement: 's1',
      values: ['text', null, Buffer.from([1, 2, 3])],
      binary: true,
    });
    expect(decoded(bind)).toEqual({
      type: 'bind',
      portal: 'p1',
      statement: 's1',
      paramFormats: [0, 0, 1],
      params: [Buffer.from('text'), null, Buffer.from([1, 2, 3])],
      resultFormats: [1],
    });
  });

  it('expands one parameter format to every parameter', () => {
    const body = Buffer.from([
      ...Buffer.from('\0\0'), // unnamed portal and statement
      0, 1, 0, 1, // one format: binary
      0, 2, // two parameters
      0, 0, 0, 1, 7,
      0, 0, 0, 2, 8, 9,
      0, 0, // no result formats
    ]); // prettier-ignore
    expect(decodeMessage('B'.charCodeAt(0), body)).toEqual({
      type: 'bind',
      portal: '',
      statement: '',
      paramFormats: [1, 1],
      params: [Buffer.from([7]), Buffer.from([8, 9])],
      resultFormats: [],
    });
  });

  it('refuses a Bind with several formats that are not one per parameter', () => {
    const body = Buffer.from([0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 7, 0, 0]);
    expect(() => decodeMessage('B'.charCodeAt(0), body)).toThrow(
      new ProtocolViolation('Bind has 2 parameter formats for 1 parameters'),
    );
  });

  it('reads Parse, Describe, Execute, Close, Sync and Query as pg sends them', () => {
    expect(decoded(serialize.parse({ name: 'q', text: 'SELECT $1', types: [23] }))).toEqual({
      type: 'parse',
      name: 'q',
      sql: 'SELECT $1',
      paramTypes: [23],
    });
    expect(decoded(serialize.describe({ type: 'S', name: 'q' }))).toEqual({
      type: 'describe',
      target: 'statement',
      name: 'q',
    });
    expect(decoded(serialize.execute({ portal: 'p', rows: 10 }))).toEqual({
      type: 'execute',
      portal: 'p',
      maxRows: 10,
    });
    expect(decoded(serialize.close({ type: 'P', name: 'p' }))).toEqual({
      type: 'close',
      target: 'portal',
      name: 'p',
    });
    expect(decoded(serialize.sync())).toEqual({ type: 'sync' });
    expect(decoded(serialize.query('SELECT ✓'))).toEqual({ type: 'query', sql: 'SELECT ✓' });
    expect(decoded(serialize.password('pässword'))).toEqual({ type: 'password', password: 'pässword' });
  });

  it('refuses a body shorter than its fields, and a string without its zero byte', () => {
    expect(() => decodeMessage('E'.charCodeAt(0), Buffer.from('p\0\0\0', 'latin1'))).toThrow(
      new ProtocolViolation('message shorter than its fields'),
    );
    expect(() => decodeMessage('Q'.charCodeAt(0), Buffer.from('SELECT 1'))).toThrow(
      new ProtocolViolation('string without its terminating zero byte'),
    );
  });
});

describe('writing backend messages', () => {
  it('writes an ErrorResponse node-postgres reads field by field', () => {
    const w = new MessageWriter();
    errorResponse(w, {
      severity: 'ERROR',
      code: '42P01',
      message: 'Table mindsdb.missing does not exist',
      detail: 'engine error 1146 in: SELECT * FROM missing',
      hint: 'SHOW TABLES',
      position: 15,
    });
    expect(parsedByPg(w.take())).toEqual([
      expect.objectContaining({
        name: 'error',
        severity: 'ERROR',
        code: '42P01',
        message: 'Table mindsdb.missing does not exist',
        detail: 'engine error 1146 in: SELECT * FROM missing',
        hint: 'SHOW TABLES',
        position: '15',
      }),
    ]);
  });

  it('writes several messages in one buffer: notice, row description, completion, ready', () => {
    const w = new MessageWriter();
    noticeResponse(w, { severity: 'WARNING', code: '01000', message: 'the result was cut' });
    rowDescription(w, [
      { name: 'price', type: pgTypeOf('DECIMAL(10,2)'), format: 0 },
      { name: 'day', type: pgTypeOf('DATE'), format: 1 },
    ]);
    commandComplete(w, 'SELECT 0');
    readyForQuery(w, 'E');
    expect(parsedByPg(w.take())).toEqual([
      expect.objectContaining({
        name: 'notice',
        severity: 'WARNING',
        code: '01000',
        message: 'the result was cut',
      }),
      expect.objectContaining({
        name: 'rowDescription',
        fields: [
          expect.objectContaining({ name: 'price', dataTypeID: 1700, dataTypeModifier: (10 << 16) + 2 + 4 }),
          expect.objectContaining({ name: 'day', dataTypeID: 1082, dataTypeSize: 4, format: 'binary' }),
        ],
      }),
      expect.objectContaining({ name: 'commandComplete', text: 'SELECT 0' }),
      expect.objectContaining({ name: 'readyForQuery', status: 'E' }),
    ]);
    expect(w.size).toBe(0);
  });

  it('writes DataRow cells that node-postgres reads back as the same text, whatever the text (short ASCII ones copied, the rest encoded)', () => {
    const cell = fc.oneof(
      fc.constant(null),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
      fc.constantFrom(
        '',
        '\uD800',
        'a\uDC00b',
        '\u0000',
        '-9223372036854775808',
        'é',
        'x'.repeat(32),
        'x'.repeat(33),
      ),
      fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
    );
    fc.assert(
      fc.property(fc.array(fc.array(cell, { maxLength: 6 }), { minLength: 1, maxLength: 8 }), (rows) => {
        const w = new MessageWriter();
        for (const row of rows) {
          w.begin('D').int16(row.length);
          for (const c of row) w.lengthPrefixed(c);
          w.end();
        }
        const read = parsedByPg(w.take()) as unknown as { name: string; fields: (string | null)[] }[];
        expect(read.map((m) => m.name)).toEqual(rows.map(() => 'dataRow'));
        // Text is sent as UTF-8 (a lone surrogate as U+FFFD); node-postgres decodes each field as UTF-8.
        const asSent = (c: string | Buffer | null) =>
          c === null ? null : (typeof c === 'string' ? Buffer.from(c, 'utf8') : c).toString('utf8');
        expect(read.map((m) => m.fields)).toEqual(rows.map((row) => row.map(asSent)));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('DuckDB types as PostgreSQL types', () => {
  it.each([
    ['BOOLEAN', 16],
    ['TINYINT', 21],
    ['SMALLINT', 21],
    ['INTEGER', 23],
    ['BIGINT', 20],
    ['HUGEINT', 1700],
    ['FLOAT', 700],
    ['DOUBLE', 701],
    ['DECIMAL(18,3)', 1700],
    ['VARCHAR', 25],
    ['BLOB', 17],
    ['DATE', 1082],
    ['TIME', 1083],
    ['TIMESTAMP', 1114],
    ['TIMESTAMP WITH TIME ZONE', 1184],
    ['INTERVAL', 1186],
    ['UUID', 2950],
    ['JSON', 114],
    ['INTEGER[]', 1007],
    ['VARCHAR[]', 1009],
    ['STRUCT(x INTEGER)', 25],
  ])('%s is OID %i', (duck, oid) => {
    expect(pgTypeOf(duck).oid).toBe(oid);
  });

  it('gives DECIMAL its precision and scale as the type modifier', () => {
    expect(pgTypeOf('DECIMAL(18,3)')).toMatchObject({ modifier: ((18 << 16) | 3) + 4, scale: 3 });
    expect(pgTypeOf('INTEGER').modifier).toBe(-1);
  });

  it("prints cells as PostgreSQL's output functions do", () => {
    expect(textCell('2024-01-02 03:04:05.500000', pgTypeOf('TIMESTAMP WITH TIME ZONE'))).toBe(
      '2024-01-02 03:04:05.5+00',
    );
    expect(textCell('2024-01-02 03:04:05.000000', pgTypeOf('TIMESTAMP'))).toBe('2024-01-02 03:04:05');
    expect(textCell(Buffer.from('xy').toString('base64'), pgTypeOf('BLOB'))).toBe('\\x7879');
    expect(textCell(1.5, pgTypeOf('DECIMAL(10,2)'))).toBe('1.50');
    expect(textCell(true, pgTypeOf('BOOLEAN'))).toBe('t');
    expect(textCell(-Infinity, pgTypeOf('DOUBLE'))).toBe('-Infinity');
    expect(
      textCell({ months: 14, days: 3, micros: String(4 * 3600e6 + 5 * 60e6 + 6.7e6) }, pgTypeOf('INTERVAL')),
    ).toBe('1 year 2 mons 3 days 04:05:06.7');
    expect(textCell({ months: 0, days: 0, micros: '0' }, pgTypeOf('INTERVAL'))).toBe('00:00:00');
    expect(textCell([1, null, 3], pgTypeOf('INTEGER[]'))).toBe('{1,NULL,3}');
  });

  it('prints a list of strings as a text[] array, quoting elements as PostgreSQL does', () => {
    // PostgreSQL: SELECT ARRAY['a b', NULL, '', 'x"y', 'NULL', 'p\q'] → {"a b",NULL,"","x\"y","NULL","p\\q"}
    expect(textCell(['a b', null, '', 'x"y', 'NULL', 'p\\q'], pgTypeOf('VARCHAR[]'))).toBe(
      '{"a b",NULL,"","x\\"y","NULL","p\\\\q"}',
    );
  });

  it('sends binary cells as the send functions do, arrays as array_send (one dimension, lower bound 1)', () => {
    expect(binaryCell(-2, pgTypeOf('INTEGER'))).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xfe]));
    expect(binaryCell('9007199254740993', pgTypeOf('BIGINT')).readBigInt64BE(0)).toBe(9007199254740993n);
    expect(binaryCell('2000-01-02', pgTypeOf('DATE')).readInt32BE(0)).toBe(1);
    expect(binaryCell('2000-01-01 00:00:01.000000', pgTypeOf('TIMESTAMP')).readBigInt64BE(0)).toBe(
      1_000_000n,
    );
    // numeric 1.50: one base-10000 digit of weight 0 and one of weight -1, display scale 2.
    expect(binaryCell(1.5, pgTypeOf('DECIMAL(10,2)'))).toEqual(
      Buffer.from([0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x13, 0x88]),
    );
    // ndim 1, has NULL, element int4, length 2, lower bound 1; then 1 (4 bytes) and NULL (-1).
    expect(binaryCell([1, null], pgTypeOf('INTEGER[]')).toString('hex')).toBe(
      '00000001' + '00000001' + '00000017' + '00000002' + '00000001' + '00000004' + '00000001' + 'ffffffff',
    );
    expect(() => binaryCell('not a date', pgTypeOf('DATE'))).toThrow(BinaryUnsupported);
  });
});

describe("the engine's error codes as SQLSTATEs", () => {
  it.each([
    [1064, '42601'],
    [1146, '42P01'],
    [1049, '3D000'],
    [1054, '42703'],
    [1227, '42501'],
    [1317, '57014'],
    [99999, 'XX000'],
  ])('engine error %i is %s', (code, state) => {
    expect(sqlStateOf(code)).toBe(state);
  });
});
