import { writeBinaryCell, writeTextCell } from './cells';
import type { Column } from './columns';
import { Capability, ServerStatus } from './constants';
import type { PacketWriter } from './packetWriter';
import { MalformedPacket, PayloadReader } from './payloadReader';

export type Status = { flags: number; warnings: number };

/** The status an answer carries: autocommit always (every statement stands alone), more results to come or not. */
export const serverStatus = (warnings: number, more = false): Status => ({
  flags: ServerStatus.AUTOCOMMIT | (more ? ServerStatus.MORE_RESULTS_EXISTS : 0),
  warnings,
});

export const okPacket = (
  w: PacketWriter,
  status: Status,
  o: { affectedRows?: number; info?: string; endOfRows?: boolean } = {},
) => {
  w.begin()
    .int1(o.endOfRows ? 0xfe : 0x00)
    .lenenc(o.affectedRows ?? 0)
    .lenenc(0)
    .int2(status.flags)
    .int2(status.warnings);
  if (o.info) w.string(o.info);
  return w.end();
};

export const errPacket = (w: PacketWriter, code: number, sqlState: string, message: string) =>
  w
    .begin()
    .int1(0xff)
    .int2(code)
    .string(`#${sqlState.padEnd(5, '0').slice(0, 5)}`)
    .string(message)
    .end();

export const eofPacket = (w: PacketWriter, status: Status) =>
  w.begin().int1(0xfe).int2(status.warnings).int2(status.flags).end();

/** After column definitions and after the rows: EOF, or an OK marked 0xFE with CLIENT_DEPRECATE_EOF. */
export const endOfColumns = (w: PacketWriter, deprecateEof: boolean, status: Status) => {
  if (!deprecateEof) eofPacket(w, status);
};

export const endOfRows = (w: PacketWriter, deprecateEof: boolean, status: Status) =>
  deprecateEof ? okPacket(w, status, { endOfRows: true }) : eofPacket(w, status);

export const columnDefinition = (
  w: PacketWriter,
  c: Column,
  where: { schema?: string; table?: string; fieldList?: boolean } = {},
) => {
  w.begin()
    .lenencString('def')
    .lenencString(where.schema ?? '')
    .lenencString(where.table ?? '')
    .lenencString(where.table ?? '')
    .lenencString(c.name)
    .lenencString(c.name)
    .lenenc(0x0c)
    .int2(c.charset)
    .int4(c.length)
    .int1(c.type)
    .int2(c.flags)
    .int1(c.decimals)
    .zeros(2);
  // COM_FIELD_LIST adds the column's default value (none here).
  if (where.fieldList) w.nullCell();
  return w.end();
};

export const textRow = (w: PacketWriter, columns: Column[], row: unknown[]) => {
  w.begin();
  for (let i = 0; i < columns.length; i++) writeTextCell(w, columns[i]!, row[i]);
  return w.end();
};

/** A binary row: 0x00, a NULL bitmap offset by two bits, then the non-null cells. */
export const binaryRow = (w: PacketWriter, columns: Column[], row: unknown[]) => {
  w.begin().int1(0);
  const bitmap = Buffer.alloc((columns.length + 9) >> 3);
  for (let i = 0; i < columns.length; i++) {
    const cell = row[i];
    if (cell === null || cell === undefined || columns[i]!.kind === 'null') {
      const bit = i + 2;
      bitmap[bit >> 3]! |= 1 << (bit & 7);
    }
  }
  w.bytes(bitmap);
  for (let i = 0; i < columns.length; i++) {
    const cell = row[i];
    if (cell === null || cell === undefined || columns[i]!.kind === 'null') continue;
    writeBinaryCell(w, columns[i]!, cell);
  }
  return w.end();
};

/** Column count, definitions and the end of them: what precedes the rows of a result set. */
export const resultSetHead = (w: PacketWriter, columns: Column[], deprecateEof: boolean, status: Status) => {
  w.begin().lenenc(columns.length).end();
  for (const c of columns) columnDefinition(w, c);
  endOfColumns(w, deprecateEof, status);
};

/** Protocol::HandshakeV10. */
export const greeting = (
  w: PacketWriter,
  g: { serverVersion: string; connectionId: number; nonce: Buffer; capabilities: number; plugin: string },
) =>
  w
    .begin()
    .int1(10)
    .nulString(g.serverVersion)
    .int4(g.connectionId)
    .bytes(g.nonce.subarray(0, 8))
    .int1(0)
    .int2(g.capabilities & 0xffff)
    .int1(45)
    .int2(ServerStatus.AUTOCOMMIT)
    .int2((g.capabilities >>> 16) & 0xffff)
    .int1(g.nonce.length + 1)
    .zeros(10)
    .bytes(g.nonce.subarray(8))
    .int1(0)
    .nulString(g.plugin)
    .end();

export const authSwitchRequest = (w: PacketWriter, plugin: string, nonce: Buffer) =>
  w.begin().int1(0xfe).nulString(plugin).bytes(nonce).int1(0).end();

export const authMoreData = (w: PacketWriter, data: Uint8Array) => w.begin().int1(0x01).bytes(data).end();

export type HandshakeResponse = {
  capabilities: number;
  charset: number;
  user: string;
  authResponse: Buffer;
  database: string | undefined;
  plugin: string | undefined;
  attributes: Record<string, string>;
};

/** The first 32 bytes every Protocol::HandshakeResponse41 starts with, alone: an SSL request. */
export const isSslRequest = (payload: Buffer) =>
  payload.length === 32 && (payload.readUInt32LE(0) & Capability.SSL) !== 0;

export const parseHandshakeResponse = (payload: Buffer): HandshakeResponse => {
  const r = new PayloadReader(payload);
  const capabilities = r.int4();
  if (!(capabilities & Capability.PROTOCOL_41))
    throw new MalformedPacket('clients older than the 4.1 protocol are not supported');
  r.int4(); // max packet size
  const charset = r.int1();
  r.bytes(23);
  const user = r.nulBytes().toString('utf8');
  let authResponse: Buffer;
  if (capabilities & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA) authResponse = Buffer.from(r.lenencBytes());
  else if (capabilities & Capability.SECURE_CONNECTION) authResponse = Buffer.from(r.bytes(r.int1()));
  else authResponse = Buffer.from(r.nulBytes());
  const database =
    capabilities & Capability.CONNECT_WITH_DB && r.remaining > 0 ? r.nulBytes().toString('utf8') : undefined;
  const plugin =
    capabilities & Capability.PLUGIN_AUTH && r.remaining > 0 ? r.nulBytes().toString('utf8') : undefined;
  const attributes: Record<string, string> = {};
  if (capabilities & Capability.CONNECT_ATTRS && r.remaining > 0) {
    const total = r.lenenc() ?? 0;
    const end = r.offset + total;
    while (r.offset < end) {
      const key = r.lenencBytes().toString('utf8');
      attributes[key] = r.lenencBytes().toString('utf8');
    }
  }
  return { capabilities, charset, user, authResponse, database: database || undefined, plugin, attributes };
};
