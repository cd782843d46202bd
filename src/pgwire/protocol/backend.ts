import type { MessageWriter } from './messageWriter';
import type { PgColumnType } from './types';

/** The messages the server sends (protocol 3.0), each written whole onto `w`. */

export const authenticationOk = (w: MessageWriter) => w.begin('R').int32(0).end();
export const authenticationCleartextPassword = (w: MessageWriter) => w.begin('R').int32(3).end();
export const parameterStatus = (w: MessageWriter, name: string, value: string) =>
  w.begin('S').cstring(name).cstring(value).end();
export const negotiateProtocolVersion = (
  w: MessageWriter,
  minor: number,
  unknownOptions: readonly string[],
) => {
  w.begin('v').int32(minor).int32(unknownOptions.length);
  for (const o of unknownOptions) w.cstring(o);
  return w.end();
};
export const backendKeyData = (w: MessageWriter, processId: number, secret: number) =>
  w.begin('K').int32(processId).int32(secret).end();

/** 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block. */
export type TransactionStatus = 'I' | 'T' | 'E';
export const readyForQuery = (w: MessageWriter, status: TransactionStatus) =>
  w.begin('Z').int8(status.charCodeAt(0)).end();

export type Field = { name: string; type: PgColumnType; format: number };
export const rowDescription = (w: MessageWriter, fields: readonly Field[]) => {
  w.begin('T').int16(fields.length);
  for (const f of fields)
    w.cstring(f.name)
      .int32(0)
      .int16(0)
      .uint32(f.type.oid)
      .int16(f.type.size)
      .int32(f.type.modifier)
      .int16(f.format);
  return w.end();
};
export const parameterDescription = (w: MessageWriter, oids: readonly number[]) => {
  w.begin('t').int16(oids.length);
  for (const oid of oids) w.uint32(oid);
  return w.end();
};
export const commandComplete = (w: MessageWriter, tag: string) => w.begin('C').cstring(tag).end();
export const emptyQueryResponse = (w: MessageWriter) => w.begin('I').end();
export const parseComplete = (w: MessageWriter) => w.begin('1').end();
export const bindComplete = (w: MessageWriter) => w.begin('2').end();
export const closeComplete = (w: MessageWriter) => w.begin('3').end();
export const noData = (w: MessageWriter) => w.begin('n').end();
export const portalSuspended = (w: MessageWriter) => w.begin('s').end();

/** What an ErrorResponse or NoticeResponse says. */
export type Report = {
  severity: 'ERROR' | 'FATAL' | 'WARNING' | 'NOTICE';
  /** SQLSTATE. */
  code: string;
  message: string;
  detail?: string;
  hint?: string;
  /** 1-based character position in the statement. */
  position?: number;
};

const writeReport = (w: MessageWriter, type: 'E' | 'N', r: Report) => {
  w.begin(type);
  w.int8(0x53).cstring(r.severity); // S: localized severity
  w.int8(0x56).cstring(r.severity); // V: severity, never localized
  w.int8(0x43).cstring(r.code); // C
  w.int8(0x4d).cstring(r.message); // M
  if (r.detail) w.int8(0x44).cstring(r.detail);
  if (r.hint) w.int8(0x48).cstring(r.hint);
  if (r.position) w.int8(0x50).cstring(String(r.position));
  return w.int8(0).end();
};
export const errorResponse = (w: MessageWriter, r: Report) => writeReport(w, 'E', r);
export const noticeResponse = (w: MessageWriter, r: Report) => writeReport(w, 'N', r);
