import { MysqlError, type Outcome, type TableOutcome } from '../outcome';
import type { EngineRowError } from '../../doorway/engine';
import { columnOf } from '../protocol/columns';
import {
  binaryRow,
  columnDefinition,
  endOfRows,
  okPacket,
  resultSetHead,
  textRow,
} from '../protocol/packets';
import { Interruption, isInterruption } from '../session/session';
import { statusOf, type Conversation } from './conversation';

/** Output is written to the socket in pieces of about this size (and waits when the client reads slower). */
export const FLUSH_BYTES = 64 * 1024;
/** Answers this short are written in one go (the common case: no promise, no flush check per row). */
const SMALL_ANSWER_ROWS = 256;

/** How a statement's outcome is written: text or binary rows (EXECUTE), and whether more results follow. */
type ResultShape = { binary: boolean; more: boolean };

/**
 * A result set: the columns, then the rows as they come (written out every FLUSH_BYTES, waiting
 * while the client is slower), then its end with the warning count (1 when the result was cut).
 * A small answer in hand is written at once, without a promise.
 */
const writeTable = (
  c: Conversation,
  outcome: TableOutcome,
  { binary, more }: ResultShape,
  signal?: AbortSignal,
): Promise<void> | undefined => {
  const { channel, session } = c;
  const writer = channel.writer;
  const columns = outcome.column_names.map((name, i) => columnOf(name, outcome.column_types[i] ?? 'VARCHAR'));
  resultSetHead(writer, columns, c.deprecateEof, statusOf(c, more));
  const writeRow = binary ? binaryRow : textRow;
  const limit = c.maxRows ?? Number.POSITIVE_INFINITY;
  const rows = outcome.rows;
  const finish = (count: number, cut: boolean) => {
    if (cut || outcome.truncated()) session.noteTruncated(count);
    endOfRows(writer, c.deprecateEof, statusOf(c, more));
  };
  if (Array.isArray(rows) && rows.length <= SMALL_ANSWER_ROWS) {
    const count = Math.min(rows.length, limit);
    for (let i = 0; i < count; i++) writeRow(writer, columns, rows[i]!);
    finish(count, count < rows.length);
    return undefined;
  }
  return (async () => {
    let count = 0;
    let cut = false;
    try {
      if (Array.isArray(rows)) {
        for (const row of rows) {
          if (count >= limit) {
            cut = true;
            break;
          }
          writeRow(writer, columns, row);
          count++;
          if (writer.size >= FLUSH_BYTES) {
            await channel.flushed();
            if (channel.closed) return;
          }
        }
      } else {
        reading: for await (const chunk of rows) {
          for (const row of chunk) {
            if (count >= limit) {
              cut = true;
              break reading;
            }
            writeRow(writer, columns, row);
            count++;
          }
          if (writer.size >= FLUSH_BYTES) {
            await channel.flushed();
          }
          if (channel.closed) break;
          // KILL QUERY or a shutdown: the rest of the result does not come, and the client is told.
          if (signal?.aborted)
            throw Object.assign(new Error(Interruption.killed), { error_code: MysqlError.Interrupted });
        }
      }
    } catch (error) {
      // A streamed result that fails part way: the error takes the place of the next row.
      // Interrupted mid-result: the client is told why (KILL QUERY, shutdown), as before the rows.
      const e = error as EngineRowError;
      const code = typeof e.error_code === 'number' ? e.error_code : MysqlError.Internal;
      const reason: unknown = signal?.aborted ? signal.reason : undefined;
      const message =
        code === MysqlError.Interrupted && isInterruption(reason)
          ? Interruption[reason]
          : typeof e.message === 'string'
            ? e.message
            : String(error);
      channel.error(code, message);
      return;
    }
    finish(count, cut);
  })();
};

/** Writes a statement's outcome; a promise only while a large result waits for the client. */
export const writeOutcome = (
  c: Conversation,
  outcome: Outcome,
  shape: ResultShape,
  signal?: AbortSignal,
): Promise<void> | undefined => {
  switch (outcome.type) {
    case 'ok':
      okPacket(c.channel.writer, statusOf(c, shape.more), {
        affectedRows: outcome.affectedRows,
        info: outcome.info,
      });
      return undefined;
    case 'error':
      c.channel.error(outcome.error_code, outcome.error_message);
      return undefined;
    case 'table':
      return writeTable(c, outcome, shape, signal);
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
};

/** COM_FIELD_LIST's answer: a table's column definitions, then the end of rows. */
export const writeFieldList = (
  c: Conversation,
  table: string,
  described: { names: string[]; types: string[] },
) => {
  described.names.forEach((name, i) =>
    columnDefinition(c.channel.writer, columnOf(name, described.types[i] ?? 'VARCHAR'), {
      schema: c.session.database(),
      table,
      fieldList: true,
    }),
  );
  endOfRows(c.channel.writer, c.deprecateEof, statusOf(c));
};
