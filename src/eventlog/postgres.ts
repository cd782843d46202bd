import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import pg from 'pg';
import type { RecordedEvent } from '../../events';
import type { Clock } from '../shared/time';
import { appendWithOneStatement, type AppendedPositions } from './postgresAppend';
import { appendNewsFeed } from './postgresNews';
import { analyzeIfNeverAnalyzed, extendEmmettSchema } from './postgresSchema';
import { keyedMutex } from './queue';
import { fromStored, prepareForAppend, toRecorded, type StoredMetadata } from './registry';
import { AppendRefused, StreamVersionConflict, type EventLog, type LogCursor } from './types';
import { messageOf } from '../shared/errors';
import {
  isConnectionLost,
  logUnavailable,
  RECONNECT_ATTEMPTS,
  rerunOnDrop,
  survivingDrops,
} from './postgresConnections';

/**
 * A row of the log as readAll and readPage select it (`MESSAGE_COLUMNS`), as an array: pg's row
 * objects (eight properties set a row) and a spread of the metadata into a read meta were a third
 * of a replay's reading on PostgreSQL; the data and metadata are parsed by pg as it reads them.
 */
type MessageRow = [
  streamId: string,
  streamPosition: string,
  globalPosition: string,
  data: unknown,
  metadata: Partial<StoredMetadata> | null,
  type: string,
  messageId: string,
  transactionId: string,
];

// Positions come back as text (bigint and xid8 exceed JS numbers).
const MESSAGE_COLUMNS = `m.stream_id, m.stream_position::text, m.global_position::text, m.message_data,
                m.message_metadata, m.message_type, m.message_id, m.transaction_id::text`;

const rowToRecorded = (row: MessageRow): RecordedEvent =>
  fromStored(row[5], row[3], row[4], row[6], row[0], BigInt(row[1]), BigInt(row[2]));

/**
 * The oldest transaction of this database still running when the statement's snapshot was taken
 * (or, with none, the first transaction that snapshot does not see). Transactions of other
 * databases on the same server cannot write this log, so they do not hold it back: with
 * `pg_snapshot_xmin` alone, every CREATE DATABASE or long job elsewhere on the server stalled the
 * tailers of every process. A running transaction counts as another database's only when a
 * backend connected to another database shows it as its own; one that just ended, or that nothing
 * names (a prepared transaction), counts as this database's, which only makes readers wait longer.
 */
const readHorizon = `coalesce(
  (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) x
    WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                       WHERE a.backend_xid = xid(x) AND a.datid IS NOT NULL AND a.datname <> current_database())),
  pg_snapshot_xmax(pg_current_snapshot()))`;

// Only rows of transactions older than every transaction of this database still running are
// visible to readers: a sequence hands out positions before commit, so a lower position can commit
// after a higher one. Reading in (transaction id, position) order behind that horizon never skips
// nor repeats an event.
const committedHorizon = `m.transaction_id < ${readHorizon}`;

/** The rows after a cursor, in the order readAll reads them; parameters from `$first` on. */
const afterCursor = (after: LogCursor, first: number): { sql: string; params: string[] } => {
  if (after.transactionId !== null)
    return {
      sql: `AND (m.transaction_id, m.global_position) > ($${first}::xid8, $${first + 1}::bigint)`,
      params: [after.transactionId, after.position.toString()],
    };
  if (after.position > 0n)
    return { sql: `AND m.global_position > $${first}::bigint`, params: [after.position.toString()] };
  return { sql: '', params: [] };
};

/**
 * readAll's statement: the next `limit` committed rows after a cursor, in the tail's order (its
 * index, `mindledger_messages_tail`). Exported for the spec of its plan.
 */
export const pageAfter = (after: LogCursor, limit: number): { text: string; values: unknown[] } => {
  const from = afterCursor(after, 2);
  return {
    // Columns come back as text, so ORDER BY names the table's.
    text: `SELECT ${MESSAGE_COLUMNS}
             FROM emt_messages m
            WHERE m.is_archived = FALSE AND ${committedHorizon} ${from.sql}
            ORDER BY m.transaction_id, m.global_position
            LIMIT $1`,
    values: [limit, ...from.params],
  };
};

/**
 * The statement of eventAt (the event's columns) and eventIdAt (its id alone). Committed rows only
 * (this statement's snapshot), without the horizon readAll and readPage keep: a position known (read
 * once, or a receipt's) names a committed event, and the horizon stays below it for as long as an
 * older transaction runs. By the position's index (`mindledger_messages_position`); exported for the
 * spec of its plan.
 */
export const eventAtQuery = (
  position: bigint,
  columns = MESSAGE_COLUMNS,
): { text: string; values: unknown[] } => ({
  text: `SELECT ${columns} FROM emt_messages m
          WHERE m.is_archived = FALSE AND m.global_position = $1::bigint`,
  values: [position.toString()],
});

/**
 * readPage's statement: the next `limit` committed rows after a position, in the position's order
 * (its index, `mindledger_messages_position`). Exported for the spec of its plan.
 */
export const pageAfterPosition = (options: {
  after: bigint;
  limit: number;
  stream?: string;
}): { text: string; values: unknown[] } => ({
  text: `SELECT ${MESSAGE_COLUMNS}
           FROM emt_messages m
          WHERE m.is_archived = FALSE AND ${committedHorizon} AND m.global_position > $1::bigint
                ${options.stream ? 'AND m.stream_id = $3' : ''}
          ORDER BY m.global_position
          LIMIT $2`,
  values: options.stream
    ? [options.after.toString(), options.limit, options.stream]
    : [options.after.toString(), options.limit],
});

/** How long unreadFloor waits for transactions running now to end before it answers conservatively. */
const FLOOR_WAIT_MS = 5_000;

/**
 * Which of `events` (by message id) the stream holds: after an append lost its connection, the
 * statement either committed or never will (the backend is gone), so this tells which.
 */
const appendedBefore = async (
  reader: pg.Pool,
  stream: string,
  events: readonly { metadata: { messageId: string } }[],
): Promise<AppendedPositions | null> => {
  const ids = events.map((e) => e.metadata.messageId);
  const { rows } = await reader.query<{
    message_id: string;
    stream_position: string;
    global_position: string;
  }>(
    `SELECT m.message_id, m.stream_position::text AS stream_position, m.global_position::text AS global_position
       FROM emt_messages m WHERE m.stream_id = $1 AND m.message_id = ANY($2::text[])`,
    [stream, ids],
  );
  if (rows.length < ids.length) return null;
  const byId = new Map(rows.map((r) => [r.message_id, r]));
  return {
    nextStreamPosition: BigInt(byId.get(ids[ids.length - 1]!)!.stream_position),
    globalPositions: ids.map((id) => BigInt(byId.get(id)!.global_position)),
  };
};

type Prepared = ReturnType<typeof prepareForAppend>;

/**
 * Appends with one statement, made again on a fresh connection when the connection went while it
 * ran and it did not commit; null when someone else appended to the stream first.
 */
const appendSurvivingDrops = async (
  writer: pg.Pool,
  reader: pg.Pool,
  stream: string,
  prepared: readonly Prepared[],
  expectedVersion: bigint,
): Promise<AppendedPositions | null> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await appendWithOneStatement(writer, stream, prepared, expectedVersion);
    } catch (error) {
      // A unique key of the stream or its positions: someone else appended first.
      const code = (error as { code?: unknown }).code;
      if (code === '23505') return null;
      // A data exception: PostgreSQL cannot store a value these events hold.
      if (typeof code === 'string' && code.startsWith('22')) throw new AppendRefused(messageOf(error));
      if (!isConnectionLost(error)) throw error;
      // The connection went while the statement ran: it committed or it never will. Committed:
      // these very events (by message id) are in the stream, and the append is answered as done,
      // not made twice. Not: it is made again on a fresh connection, then refused as retryable.
      const done = await rerunOnDrop(() => appendedBefore(reader, stream, prepared)).catch(() => undefined);
      if (done === undefined) throw logUnavailable(error, false);
      if (done) return done;
      if (attempt >= RECONNECT_ATTEMPTS) throw logUnavailable(error, true);
      await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
    }
  }
};

type ReadQuery = <R extends pg.QueryResultRow>(
  text: string,
  values?: unknown[],
) => Promise<pg.QueryResult<R>>;

/** The lowest position that may still become readable after `cursor` (0: claim nothing beyond this process). */
const unreadFloor = async (read: ReadQuery, cursor: LogCursor): Promise<bigint> => {
  // 1. Every position handed out so far is at most `handedOut`. Emmett's append takes its
  //    transaction id before its position, so each of them belongs to a transaction that had its
  //    id before the next statement's snapshot: below that snapshot's xmax.
  const { rows: sequence } = await read<{ handed_out: string }>(
    `SELECT (CASE WHEN s.is_called THEN s.last_value ELSE 0 END)::text AS handed_out
       FROM emt_global_message_position s`,
  );
  const handedOut = sequence[0]?.handed_out ?? '0';
  const { rows: now } = await read<{ xmax: string }>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
  );
  // 2. Once those transactions have all ended, their rows are committed or never will be.
  const deadline = Date.now() + FLOOR_WAIT_MS;
  for (;;) {
    const { rows } = await read<{ ended: boolean }>(`SELECT ${readHorizon} >= $1::xid8 AS ended`, [
      now[0]?.xmax ?? '0',
    ]);
    if (rows[0]?.ended) break;
    // A transaction that stays open this long: claim nothing beyond what this process applies.
    if (Date.now() > deadline) return 0n;
    await new Promise((r) => setTimeout(r, 10));
  }
  // 3. The lowest of them the cursor has not passed; none: everything handed out so far.
  const from = afterCursor(cursor, 2);
  const { rows } = await read<{ first: string | null }>(
    `SELECT min(m.global_position)::text AS first FROM emt_messages m
      WHERE m.is_archived = FALSE AND m.global_position <= $1::bigint ${from.sql}`,
    [handedOut, ...from.params],
  );
  const first = rows[0]?.first;
  return first === null || first === undefined ? BigInt(handedOut) + 1n : BigInt(first);
};

/**
 * Emmett's driver (dumbo), as its first pool is made, sets pg's JSON and JSONB parsers for the whole
 * process to turn integers past 2^53 (1e20 included) and numeric strings of 16 characters or more
 * into BigInt. An event read back on PostgreSQL then differed from what was written (and from the
 * same event on SQLite): its data could not be projected ("Do not know how to serialize a BigInt"
 * stopped the read model), and a customer's JSON columns read through pg changed type too. JSON is
 * read as written here, as pg reads it by default.
 */
const keepJsonAsWritten = () => {
  pg.types.setTypeParser(pg.types.builtins.JSON, JSON.parse);
  pg.types.setTypeParser(pg.types.builtins.JSONB, JSON.parse);
};

/** The shared log for scale-out: several API processes append to and tail one PostgreSQL database. */
export const openPostgresLog = async (connectionString: string, clock: Clock): Promise<EventLog> => {
  // Every pool of the log survives its connections being cut (a terminated backend, a restart, a
  // failover): Emmett's own too, which it would otherwise make without an 'error' listener.
  const storePool = survivingDrops(new pg.Pool({ connectionString, max: 10 }));
  const store = getPostgreSQLEventStore(connectionString, {
    schema: { autoMigration: 'CreateOrUpdate' },
    connectionOptions: { pool: storePool },
  });
  keepJsonAsWritten();
  const reader = survivingDrops(new pg.Pool({ connectionString, max: 4 }));
  // Appends: one statement each (postgresAppend.ts), so a connection is held only for that statement.
  const writer = survivingDrops(new pg.Pool({ connectionString, max: 10 }));
  try {
    await store.schema.migrate();
    await extendEmmettSchema(reader);
    await analyzeIfNeverAnalyzed(reader);
  } catch (error) {
    await Promise.all([storePool.end(), reader.end(), writer.end()]).catch(() => undefined);
    throw error;
  }
  const read = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
    rerunOnDrop(() => reader.query<R>(text, values));
  const readRows = async (text: string, values: unknown[]) =>
    (await rerunOnDrop(() => reader.query<MessageRow>({ text, values, rowMode: 'array' }))).rows;
  const news = appendNewsFeed(connectionString);
  const perStream = keyedMutex();

  const log: EventLog = {
    kind: 'postgres',
    soleWriter: false,

    readStream: async (stream, afterVersion) => {
      // PostgreSQL's text holds no NUL, so no stream is named with one: nothing to read (a lookup
      // of a name a client sent, `/api/projects/%00`, is then not found, as on SQLite).
      if (stream.includes('\u0000')) return { events: [], version: 0n };
      const result = await rerunOnDrop(() => store.readStream(stream, { from: afterVersion + 1n }));
      const events = result.events.map((e) => toRecorded(e.type, e.data, e.metadata));
      return { events, version: result.currentStreamVersion };
    },

    append: async (stream, events, expectedVersion, causes) => {
      const prepared = events.map((e, i) =>
        prepareForAppend(e, clock(), causes ? { cause: causes[i] } : undefined),
      );
      const appended = await appendSurvivingDrops(writer, reader, stream, prepared, expectedVersion);
      if (!appended) throw new StreamVersionConflict(stream, expectedVersion);
      const { nextStreamPosition: streamVersion, globalPositions } = appended;
      // Positions come from a shared sequence and need not be consecutive: as the function told them.
      const firstVersion = streamVersion - BigInt(prepared.length) + 1n;
      const recorded = prepared.map((e, i) =>
        toRecorded(e.type, e.data, {
          ...e.metadata,
          streamName: stream,
          streamPosition: firstVersion + BigInt(i),
          globalPosition: globalPositions[i]!,
        }),
      );
      return { lastPosition: globalPositions[globalPositions.length - 1]!, streamVersion, events: recorded };
    },

    readAll: async (after: LogCursor, limit: number) => {
      const page = pageAfter(after, limit);
      const rows = await readRows(page.text, page.values);
      const last = rows[rows.length - 1];
      return {
        events: rows.map(rowToRecorded),
        cursor: last ? { position: BigInt(last[2]), transactionId: last[7] } : after,
      };
    },

    head: async () => {
      const { rows } = await read<{ n: string; last: string | null }>(
        `SELECT count(*)::text AS n, max(m.global_position)::text AS last FROM emt_messages m
          WHERE m.is_archived = FALSE AND ${committedHorizon}`,
      );
      return { events: Number(rows[0]?.n ?? 0), position: BigInt(rows[0]?.last ?? 0) };
    },

    eventAt: async (position) => {
      const query = eventAtQuery(position);
      const [row] = await readRows(query.text, query.values);
      return row ? rowToRecorded(row) : null;
    },

    eventIdAt: async (position) => {
      const query = eventAtQuery(position, 'm.message_id');
      const { rows } = await read<{ message_id: string }>(query.text, query.values);
      return rows[0]?.message_id ?? null;
    },

    readPage: async (options) => {
      const page = pageAfterPosition(options);
      return (await readRows(page.text, page.values)).map(rowToRecorded);
    },

    exclusive: (stream, work) => perStream(stream, work),

    follow: (listener) => news.follow(listener),

    unreadFloor: (cursor) => unreadFloor(read, cursor),

    close: async () => {
      await news.close();
      await reader.end();
      await writer.end();
      await store.close();
      await storePool.end();
    },
  };
  return log;
};
