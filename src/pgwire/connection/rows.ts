import { PgState } from '../errors';
import type { Field } from '../protocol/backend';
import type { MessageWriter } from '../protocol/messageWriter';
import { binaryCell, textCell, type PgColumnType } from '../protocol/types';
import { error, StatementError } from './reports';

/** Result formats as Bind gave them: none (all text), one for all, or one per column. */
export const fieldsOf = (
  columns: readonly { name: string; type: PgColumnType }[],
  formats: readonly number[],
): Field[] => {
  if (formats.length > 1 && formats.length !== columns.length)
    throw new StatementError(
      error(
        PgState.ProtocolViolation,
        `bind message has ${formats.length} result formats but query has ${columns.length} columns`,
      ),
    );
  return columns.map((c, i) => {
    const format = formats.length === 0 ? 0 : formats.length === 1 ? formats[0]! : (formats[i] ?? 0);
    return { name: c.name, type: c.type, format };
  });
};

/** One DataRow: each cell in its column's format (text or binary), NULL as length -1. */
export const writeDataRow = (w: MessageWriter, fields: readonly Field[], row: readonly unknown[]) => {
  const before = w.size;
  try {
    w.begin('D').int16(fields.length);
    for (let i = 0; i < fields.length; i++) {
      const cell = row[i];
      const field = fields[i]!;
      if (cell === null || cell === undefined) w.int32(-1);
      else if (field.format === 1) w.lengthPrefixed(binaryCell(cell, field.type));
      else w.lengthPrefixed(textCell(cell, field.type));
    }
    w.end();
  } catch (e) {
    // A cell that has no form here (a value its type's rule cannot read): the row is not sent
    // half-written, the error takes its place.
    w.truncate(before);
    throw e;
  }
};
