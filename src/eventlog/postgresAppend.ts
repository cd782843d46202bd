import { JSONParser } from '@event-driven-io/emmett';
import type pg from 'pg';
import { streamTypeOf } from './emmettNames';

/** An event as `prepareForAppend` makes it: our metadata carries the message id. */
export type PreparedEvent = { type: string; data: unknown; metadata: { messageId: string } };

/** Where an append's events went, as Emmett's `emt_append_to_stream` tells it. */
export type AppendedPositions = { nextStreamPosition: bigint; globalPositions: bigint[] };

/**
 * Appends `events` to `stream` with one statement: Emmett's own `emt_append_to_stream` (its
 * schema, its checks, its rows), called as Emmett 0.42's `appendToStream` calls it, minus the
 * BEGIN and COMMIT around it. The function is one statement, so it is atomic on its own; Emmett's
 * transaction only gave its in-transaction hooks a place to run, and cost two more round trips per
 * append (a third of this process's socket writes under concurrent creates). Prepared once per
 * connection. Returns null when the stream exists at another version than `expectedVersion` (or
 * nothing is given to append); expecting 0 of a stream that exists fails with the unique-key error
 * of its row (23505), as Emmett's path does. Either way someone appended first.
 */
export const appendWithOneStatement = async (
  pool: pg.Pool,
  stream: string,
  events: readonly PreparedEvent[],
  expectedVersion: bigint,
): Promise<AppendedPositions | null> => {
  // Nothing to append is refused, as Emmett refuses it.
  if (events.length === 0) return null;
  const streamType = streamTypeOf(stream);
  const { rows } = await pool.query<{
    success: boolean;
    next_stream_position: string | null;
    global_positions: string[] | null;
  }>({
    name: 'mindledger_append_to_stream',
    text: `SELECT success, next_stream_position::text AS next_stream_position,
                  global_positions::text[] AS global_positions
             FROM emt_append_to_stream($1::text[], $2::jsonb[], $3::jsonb[], $4::text[], $5::text[],
                                       $6::text[], $7::text, $8::text, $9::bigint, $10::text)`,
    values: [
      events.map((e) => e.metadata.messageId),
      events.map((e) => JSONParser.stringify(e.data)),
      // Emmett stores the metadata without the message id (it has a column of its own).
      events.map((e) => {
        const { messageId: _id, ...stored } = e.metadata;
        return JSONParser.stringify(stored);
      }),
      events.map(() => '1'),
      events.map((e) => e.type),
      events.map(() => 'E'),
      stream,
      streamType,
      expectedVersion.toString(),
      'emt:default',
    ],
  });
  const row = rows[0];
  if (!row?.success || row.next_stream_position === null || !row.global_positions?.length) return null;
  return {
    nextStreamPosition: BigInt(row.next_stream_position),
    globalPositions: row.global_positions.map((p) => BigInt(p)),
  };
};
