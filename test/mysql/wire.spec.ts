import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { Capability, ColumnType, Command } from '../../src/mysql/protocol/constants';
import { PacketReader, type Packet } from '../../src/mysql/protocol/packetReader';
import { PacketWriter } from '../../src/mysql/protocol/packetWriter';
import { PayloadReader } from '../../src/mysql/protocol/payloadReader';
import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type MysqlServer } from '../../src/mysql';
import { appEngine, selfSignedCertificate, startFront, type Front } from './support';

/**
 * A bare client speaking the protocol byte by byte, for what the drivers at hand never send:
 * CLIENT_DEPRECATE_EOF (Connector/J and MySQL 8 clients use it), COM_FIELD_LIST,
 * COM_STMT_SEND_LONG_DATA, pipelined commands, malformed packets.
 */
class WireClient {
  private readonly reader = new PacketReader();
  private readonly queue: Packet[] = [];
  private wake: (() => void) | undefined;
  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.feed(chunk);
      for (let p = this.reader.read(); p; p = this.reader.read()) this.queue.push(p);
      this.wake?.();
    });
  }

  static async connect(port: number, capabilities: number): Promise<WireClient> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const client = new WireClient(socket);
    await client.next(); // greeting
    const w = new PacketWriter();
    w.sequence = 1;
    w.begin()
      .int4(capabilities)
      .int4(16 * 1024 * 1024)
      .int1(45)
      .zeros(23)
      .nulString('wire')
      .int1(0) // no auth response
      .nulString('mysql_native_password')
      .end();
    socket.write(w.take());
    const ok = await client.next();
    expect(ok.payload[0]).toBe(0x00);
    return client;
  }

  async next(): Promise<Packet> {
    while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.queue.shift()!;
  }

  /** Sends commands (each its own packet, sequence 0), all in one write. */
  send(...payloads: Buffer[]) {
    const w = new PacketWriter();
    for (const p of payloads) {
      w.sequence = 0;
      w.begin().bytes(p).end();
    }
    this.socket.write(w.take());
  }

  async take(n: number) {
    const packets: Packet[] = [];
    for (let i = 0; i < n; i++) packets.push(await this.next());
    return packets;
  }

  /** Packets until (and with) the one `last` accepts. */
  async until(last: (p: Packet) => boolean) {
    const packets: Packet[] = [];
    for (;;) {
      const p = await this.next();
      packets.push(p);
      if (last(p)) return packets;
    }
  }

  /** Resolves when the server has closed the connection. */
  closed() {
    return new Promise<void>((resolve) => {
      if (this.socket.destroyed || this.socket.readableEnded) resolve();
      else this.socket.once('close', () => resolve());
    });
  }

  close() {
    this.socket.destroy();
  }
}

const command = (code: number, ...parts: (Buffer | string)[]) =>
  Buffer.concat([Buffer.from([code]), ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))]);

const BASE =
  Capability.PROTOCOL_41 | Capability.SECURE_CONNECTION | Capability.PLUGIN_AUTH | Capability.LONG_PASSWORD;

const isEnd = (p: Packet) => (p.payload[0] === 0xfe && p.payload.length < 0xffffff) || p.payload[0] === 0xff;
const columnName = (p: Packet) => {
  const r = new PayloadReader(p.payload);
  for (let i = 0; i < 4; i++) r.lenencBytes();
  return r.lenencBytes().toString();
};

const columnType = (p: Packet) => {
  const r = new PayloadReader(p.payload);
  for (let i = 0; i < 6; i++) r.lenencBytes();
  r.lenenc();
  r.int2();
  r.int4();
  return r.int1();
};

describe('MySQL wire protocol, byte by byte', () => {
  let front: Front;
  const clients: WireClient[] = [];
  const connect = async (capabilities: number, port = front.port) => {
    const c = await WireClient.connect(port, capabilities);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    front = await startFront();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await front.dispose();
  });

  it('given CLIENT_DEPRECATE_EOF, then a result set has no EOF after its columns and ends with an OK marked 0xFE', async () => {
    const c = await connect(BASE | Capability.DEPRECATE_EOF);
    c.send(command(Command.QUERY, "SELECT 1 AS a, 'x' AS b"));
    const packets = await c.until(isEnd);
    expect(packets.map((p) => p.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(packets[0]!.payload).toEqual(Buffer.from([2]));
    expect(packets.slice(1, 3).map(columnName)).toEqual(['a', 'b']);
    // The row (text protocol): "1", "x".
    expect(packets[3]!.payload).toEqual(Buffer.from([1, 0x31, 1, 0x78]));
    // OK packet with the 0xFE header: affected rows 0, insert id 0, status AUTOCOMMIT, 0 warnings.
    expect(packets[4]!.payload).toEqual(Buffer.from([0xfe, 0, 0, 2, 0, 0, 0]));
  });

  it('given no CLIENT_DEPRECATE_EOF, then columns and rows each end with an EOF packet', async () => {
    const c = await connect(BASE);
    c.send(command(Command.QUERY, 'SELECT 1 AS a'));
    const packets = await c.until((p) => p.payload[0] === 0xfe && p.sequence > 3);
    expect(packets.map((p) => [...p.payload.subarray(0, 1)])).toEqual([[1], [3], [0xfe], [1], [0xfe]]);
    expect(packets[4]!.payload).toEqual(Buffer.from([0xfe, 0, 0, 2, 0]));
  });

  it('answers pipelined commands in order', async () => {
    const c = await connect(BASE | Capability.DEPRECATE_EOF);
    c.send(command(Command.PING), command(Command.QUERY, 'SELECT 7 AS n'), command(Command.PING));
    expect((await c.next()).payload[0]).toBe(0x00);
    const result = await c.until(isEnd);
    expect(result[2]!.payload).toEqual(Buffer.from([1, 0x37]));
    expect((await c.next()).payload[0]).toBe(0x00);
  });

  it('lists a table’s columns for COM_FIELD_LIST', async () => {
    const c = await connect(BASE);
    c.send(command(Command.FIELD_LIST, 'skills\0'));
    const packets = await c.until(isEnd);
    expect(packets.slice(0, -1).map(columnName)).toEqual(['NAME', 'PROJECT', 'TYPE', 'PARAMS']);
    c.send(command(Command.FIELD_LIST, 'nothing\0'));
    const [error] = await c.until(isEnd);
    expect(new PayloadReader(error!.payload).int1()).toBe(0xff);
    expect(error!.payload.readUInt16LE(1)).toBe(1146);
  });

  it('answers COM_STATISTICS with a status line and unknown commands with error 1047', async () => {
    const c = await connect(BASE);
    c.send(command(Command.STATISTICS));
    expect((await c.next()).payload.toString()).toMatch(/^Uptime: \d+ {2}Threads: \d+/);
    c.send(command(0x7f));
    const error = await c.next();
    expect([
      error.payload[0],
      error.payload.readUInt16LE(1),
      error.payload.subarray(3, 9).toString(),
    ]).toEqual([0xff, 1047, '#08S01']);
  });

  it('binds a parameter sent in pieces with COM_STMT_SEND_LONG_DATA', async () => {
    const c = await connect(BASE);
    c.send(command(Command.STMT_PREPARE, 'SELECT ? AS v, ? AS w'));
    // OK, two parameter definitions, EOF.
    const prepared = await c.take(4);
    expect(prepared[3]!.payload[0]).toBe(0xfe);
    const id = prepared[0]!.payload.readUInt32LE(1);
    expect(prepared[0]!.payload.readUInt16LE(7)).toBe(2); // parameters
    const statementId = Buffer.alloc(4);
    statementId.writeUInt32LE(id);
    c.send(
      command(Command.STMT_SEND_LONG_DATA, statementId, Buffer.from([0, 0]), 'long '),
      command(Command.STMT_SEND_LONG_DATA, statementId, Buffer.from([0, 0]), 'data'),
    );
    const execute = new PacketWriter();
    execute
      .begin()
      .int1(Command.STMT_EXECUTE)
      .bytes(statementId)
      .int1(0)
      .int4(1)
      .int1(0) // NULL bitmap
      .int1(1)
      .int1(ColumnType.VAR_STRING)
      .int1(0)
      .int1(ColumnType.LONG)
      .int1(0)
      .int4(-5 >>> 0) // the second parameter's value (the first came as long data)
      .end();
    const payload = new PacketReader();
    payload.feed(execute.take());
    c.send(payload.read()!.payload);
    // Column count, two columns, EOF, the row, EOF.
    const result = await c.take(6);
    expect(result.slice(1, 3).map(columnName)).toEqual(['v', 'w']);
    // Binary row: header 0, NULL bitmap, "long data" as a length-encoded string, then -5 in
    // the binary form of the type the engine gave the column (HUGEINT: a DECIMAL's text).
    const row = new PayloadReader(result[4]!.payload);
    expect([row.int1(), row.int1(), row.lenencBytes().toString()]).toEqual([0, 0, 'long data']);
    const type = columnType(result[2]!);
    const value =
      type === ColumnType.NEWDECIMAL
        ? row.lenencBytes().toString()
        : type === ColumnType.LONGLONG
          ? String(BigInt.asIntN(64, row.int8()))
          : String(row.rest().readInt32LE(0));
    expect(value).toBe('-5');
  });

  it('answers a truncated COM_STMT_EXECUTE with an error and keeps the connection', async () => {
    const c = await connect(BASE);
    c.send(command(Command.STMT_PREPARE, 'SELECT ? AS v'));
    const prepared = await c.take(3);
    const statementId = Buffer.alloc(4);
    statementId.writeUInt32LE(prepared[0]!.payload.readUInt32LE(1));
    c.send(command(Command.STMT_EXECUTE, statementId, Buffer.from([0, 1, 0])));
    const error = await c.next();
    expect([error.payload[0], error.payload.subarray(9).toString()]).toEqual([
      0xff,
      'Malformed packet: the packet ends early',
    ]);
    c.send(command(Command.PING));
    expect((await c.next()).payload[0]).toBe(0x00);
  });

  describe('given a server with tight limits', () => {
    let server: MysqlServer;
    beforeAll(async () => {
      server = await startMysqlServer({
        engine: appEngine(front.app),
        host: '127.0.0.1',
        port: 0,
        logger: pino({ level: 'silent' }),
        maxConnections: 1,
        maxPacketBytes: 1024,
        handshakeTimeoutMs: 300,
      });
    });
    afterAll(() => server.close(0));

    it('refuses a connection over the limit with 1040, answers a packet over max_allowed_packet with 1153 and closes', async () => {
      const c = await connect(BASE, server.port);
      await expect(
        mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'x' }),
      ).rejects.toMatchObject({
        errno: 1040,
        message: 'Too many connections',
      });
      c.send(command(Command.QUERY, 'SELECT @@max_allowed_packet AS m'));
      // Column count, the column, EOF, the row, EOF.
      const max = await c.take(5);
      expect(max[3]!.payload.toString('latin1', 1)).toBe('1024');
      c.send(command(Command.QUERY, `SELECT '${'x'.repeat(2000)}'`));
      const error = await c.next();
      expect([error.payload.readUInt16LE(1), error.payload.subarray(9).toString()]).toEqual([
        1153,
        "Got a packet bigger than 'max_allowed_packet' bytes (1024)",
      ]);
      await c.closed();
    });

    it('disconnects a client that does not log in', async () => {
      const patient = await startMysqlServer({
        engine: appEngine(front.app),
        host: '127.0.0.1',
        port: 0,
        logger: pino({ level: 'silent' }),
        handshakeTimeoutMs: 300,
      });
      try {
        const socket = net.connect(patient.port, '127.0.0.1');
        const received: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => received.push(chunk));
        await new Promise((resolve) => socket.once('close', resolve));
        // The greeting (protocol version 10), then nothing until the server hung up.
        expect(Buffer.concat(received)[4]).toBe(10);
        expect(patient.connections()).toBe(0);
      } finally {
        await patient.close(0);
      }
    });
  });

  it('upgrades to TLS when the TLS handshake arrives in the same read as the SSL request', async () => {
    const certificate = await selfSignedCertificate();
    const secure = await startMysqlServer({
      engine: appEngine(front.app),
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      tls: { cert: certificate.cert, key: certificate.key },
    });
    const socket = net.connect(secure.port, '127.0.0.1');
    try {
      const greeting = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
      // The greeting offers TLS: after the version's NUL, the connection id (4), nonce (8), filler (1).
      const lowCapabilities = greeting.readUInt16LE(greeting.indexOf(0, 5) + 1 + 4 + 8 + 1);
      expect(lowCapabilities & Capability.SSL).toBe(Capability.SSL);
      const flags = BASE | Capability.SSL;
      const ssl = new PacketWriter();
      ssl.sequence = 1;
      ssl
        .begin()
        .int4(flags)
        .int4(16 * 1024 * 1024)
        .int1(45)
        .zeros(23)
        .end();
      // Held back so that the SSL request and the ClientHello leave in one segment.
      socket.cork();
      socket.write(ssl.take());
      const tlsSocket = tls.connect({ socket, rejectUnauthorized: false });
      process.nextTick(() => socket.uncork());
      await new Promise((resolve) => tlsSocket.once('secureConnect', resolve));
      const login = new PacketWriter();
      login.sequence = 2;
      login
        .begin()
        .int4(flags)
        .int4(16 * 1024 * 1024)
        .int1(45)
        .zeros(23)
        .nulString('tls')
        .int1(0)
        .nulString('mysql_native_password')
        .end();
      login.sequence = 0;
      login.begin().bytes(command(Command.QUERY, "SELECT 'over tls' AS t")).end();
      tlsSocket.write(login.take());
      const reader = new PacketReader();
      const packets: Packet[] = [];
      while (packets.length < 6) {
        reader.feed(await new Promise<Buffer>((resolve) => tlsSocket.once('data', resolve)));
        for (let p = reader.read(); p; p = reader.read()) packets.push(p);
      }
      // OK (logged in), then the result: count, column, EOF, row, EOF.
      expect(packets[0]!.payload[0]).toBe(0x00);
      expect(packets[4]!.payload.toString('utf8', 1)).toBe('over tls');
      tlsSocket.destroy();
    } finally {
      socket.destroy();
      await secure.close(0);
      fs.rmSync(certificate.dir, { recursive: true, force: true });
    }
  });
});
