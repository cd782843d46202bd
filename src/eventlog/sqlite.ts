import fs from 'node:fs';
import path from 'node:path';
import { isExpectedVersionConflictError, JSONParser } from '@event-driven-io/emmett';
import { getSQLiteEventStore, SQLiteConnectionPool } from '@event-driven-io/emmett-sqlite';
import type { RecordedEvent } from '../../events';
import type { Clock } from '../shared/time';
import { AppendedTail } from './appendedTail';
import { streamTypeOf } from './emmettNames';
import { keyedMutex, serialQueue } from './queue';
import { openSqliteConnection } from './sqliteConnection';
import {
  fromStored,
  MAY_HOLD_LONE_SURROGATE,
  parseStoredJson,
  prepareForAppend,
  replaceLoneSurrogates,
  toRecorded,
  type StoredMetadata,
} from './registry';
import { StreamVersionConflict, type AppendResult, type EventLog, type LogCursor } from './types';
import { messageOf, unavailable } from '../shared/errors';

/** SQLite's words (and the OS's) for a disk that cannot take a write: full, over quota, or failing. */
const isDiskError = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === 'SQLITE_FULL' ||
    code === 'SQLITE_IOERR' ||
    code === 'ENOSPC' ||
    /SQLITE_FULL|SQLITE_IOERR|disk is full|No space left|ENOSPC/i.test(messageOf(error))
  );
};

/**
 * An append the disk refused: nothing was stored (the transaction rolled back), and it may be
 * retried once space is freed (503, Retry-After), naming the disk rather than a fault of the request.
 */
const diskRefused = (fileName: string, error: unknown) =>
  unavailable(
    `Nothing was written: ${
      /FULL|full|No space|ENOSPC/.test(messageOf(error)) ? 'no space left' : 'a write failed'
    } on the device holding DATA_DIR (the event log, ${fileName}): ${messageOf(error)}. Free space there; writes resume without a restart.`,
    5,
    'Insufficient storage',
  );

type StoredRow = {
  stream_id: string;
  stream_position: number | string;
  global_position: number | string;
  message_data: string;
  message_metadata: string;
  message_type: string;
  message_id: string;
};

const rowToRecorded = (row: StoredRow): RecordedEvent =>
  fromStored(
    row.message_type,
    parseStoredJson(row.message_data),
    parseStoredJson(row.message_metadata) as Partial<StoredMetadata> | null,
    row.message_id,
    row.stream_id,
    BigInt(row.stream_position),
    BigInt(row.global_position),
  );

/** A page of the log as rows: those `where` selects, in global-position order, at most `?` of them. */
const pageRowsSql = (where: string) => `
  SELECT stream_id, stream_position, global_position, message_data, message_metadata, message_type, message_id
    FROM emt_messages
   WHERE partition = 'emt:default' AND is_archived = FALSE AND ${where}
   ORDER BY global_position LIMIT ?`;

/**
 * The most characters of stored data and metadata a page is read as one text for (`pageAsJson`): far
 * below V8's longest string (2^29 - 24) and SQLite's longest value (10^9 bytes), which a page of large
 * events (a 10 MB body each) would pass; such a page is read as row objects, a string per value.
 */
const PAGE_TEXT_MAX_CHARS = 2 ** 27;

/**
 * A page of the log (`where` and `params`: which rows, in global-position order, at most how many)
 * as one JSON text made by SQLite: each event's seven values in a row of one flat array, its data
 * and metadata as stored. sqlite3 has no array rows: a row object per event (seven properties set
 * from C++), then a JSON.parse each for its data and metadata, were most of a replay's and a
 * verification's reading; one text and one JSON.parse a page cost a fraction of it, and SQLite
 * builds the text on its own thread. `fit` counts the rows the text renders exactly as the row
 * objects read them: stored texts that are each one JSON value (so none can run into its
 * neighbours), integer positions (JSON's number is the driver's) and text names.
 */
const pageAsJson = (where: string) => `
  SELECT count(*) AS n,
         sum(typeof(message_data) = 'text' AND json_valid(message_data)
             AND typeof(message_metadata) = 'text' AND json_valid(message_metadata)
             AND typeof(stream_position) = 'integer' AND typeof(global_position) = 'integer'
             AND typeof(stream_id) = 'text' AND typeof(message_type) = 'text' AND typeof(message_id) = 'text') AS fit,
         CASE WHEN sum(length(message_data) + length(message_metadata)) <= ${PAGE_TEXT_MAX_CHARS}
              THEN '[' || group_concat(
                  json_quote(stream_id) || ',' || stream_position || ',' || global_position || ',' ||
                  json_quote(message_type) || ',' || json_quote(message_id) || ',' ||
                  message_data || ',' || message_metadata, ',') || ']' END AS page
    FROM (${pageRowsSql(where)})`;

/**
 * The events of a page read as one JSON text (`pageAsJson`), the same events `rowToRecorded` makes
 * of its rows (test/eventlog/page-reading.property.spec.ts); undefined when the text cannot be
 * trusted to be (a row of another shape, which only an edit outside the service makes).
 */
const eventsOfPage = (answer: { n: number; fit: number | null; page: string | null } | undefined) => {
  if (!answer || answer.n === 0) return [];
  if (answer.fit !== answer.n || answer.page === null) return undefined;
  let values: unknown;
  try {
    values = JSON.parse(answer.page);
  } catch {
    return undefined;
  }
  if (!Array.isArray(values) || values.length !== answer.n * 7) return undefined;
  // As parseStoredJson reads a text that may hold a lone surrogate (made well-formed), a value at a time.
  const stored = MAY_HOLD_LONE_SURROGATE.test(answer.page) ? replaceLoneSurrogates : (v: unknown) => v;
  const events: RecordedEvent[] = new Array(answer.n);
  let previous = -Infinity;
  for (let i = 0, k = 0; i < answer.n; i++, k += 7) {
    // The values' kinds are the ones `fit` counted (texts, integers): String and Number change nothing.
    const position = Number(values[k + 2]);
    // SQLite concatenates in the order the rows come, which it does not promise to be the
    // subquery's (an ORDER BY in group_concat cost a fifth of the query): the rows, then.
    if (!(position > previous)) return undefined;
    previous = position;
    events[i] = fromStored(
      String(values[k + 3]),
      stored(values[k + 5]),
      stored(values[k + 6]) as Partial<StoredMetadata> | null,
      String(values[k + 4]),
      String(values[k]),
      BigInt(Number(values[k + 1])),
      BigInt(position),
    );
  }
  return events;
};

/**
 * The rows `where` selects (in global-position order, at most `limit`) as events: as one JSON text
 * (`pageAsJson`), or as row objects when that text cannot be trusted to give the same events.
 */
const readPageOf = async (
  connection: Awaited<ReturnType<typeof openSqliteConnection>>,
  where: string,
  params: (string | number)[],
  limit: number,
): Promise<RecordedEvent[]> => {
  // A text SQLite refuses to make (past its longest value, which the size guard should keep it
  // from) is read as row objects too: whatever fails the same way fails there again.
  const answer = await connection
    .query<{ n: number; fit: number | null; page: string | null }>(pageAsJson(where), [...params, limit])
    .then(([first]) => first)
    .catch(() => null);
  const events = answer === null ? undefined : eventsOfPage(answer);
  if (events) return events;
  const rows = await connection.query<StoredRow>(pageRowsSql(where), [...params, limit]);
  return rows.map(rowToRecorded);
};

/** An append waiting for its turn in the queue (see `appendGroup`). */
type WaitingAppend = {
  readonly stream: string;
  readonly prepared: readonly ReturnType<typeof prepareForAppend>[];
  readonly expectedVersion: bigint;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
};

/** A stored row, with its position as a number to order by (what the appended tail holds). */
type TailRow = StoredRow & { readonly position: bigint };

/**
 * The row an append stores, as Emmett 0.42 writes it (its `appendToStream`: the data and metadata
 * as `JSONParser` texts, its own metadata fields under ours): a read parses these texts, so the
 * events read from memory are the events a query would read (test/eventlog/appended-tail.property).
 */
const storedRow = (
  stream: string,
  e: { type: string; data: unknown; metadata: { messageId: string } },
  index: number,
  streamPosition: bigint,
  position: bigint,
): TailRow => {
  const { messageId, ...ours } = e.metadata;
  return {
    stream_id: stream,
    stream_position: String(streamPosition),
    global_position: String(position),
    message_data: JSONParser.stringify(e.data),
    // Emmett's own fields first (its messageId among them, in its place), ours over them: the text
    // Emmett stores, which `appendInFewStatements` stores too.
    message_metadata: JSONParser.stringify({
      streamName: stream,
      messageId,
      streamPosition: BigInt(index + 1),
      ...ours,
    }),
    message_type: e.type,
    message_id: messageId,
    position,
  };
};

const readBatch = (events: RecordedEvent[], after: LogCursor) => {
  const last = events[events.length - 1];
  return { events, cursor: last ? { position: last.meta.position, transactionId: null } : after };
};

type Outcome = { rows: TailRow[]; result: Omit<AppendResult, 'events'> } | { error: unknown };

/** The partition Emmett 0.42 writes every event in. */
const PARTITION = 'emt:default';
/**
 * …and every stream row in: Emmett 0.42 binds its column descriptor (`{name: 'partition'}`) where
 * the partition goes, which sqlite3 stores as this text. Its appends look streams up by it.
 */
const STREAMS_PARTITION = '[object Object]';
/** Most events `appendInFewStatements` writes with one INSERT (7 parameters each). */
const MAX_GROUPED_EVENTS = 2_000;

/** What the group commit works with: the log's one connection, Emmett's store over it, what is known of the log. */
type GroupCommitDeps = {
  readonly fileName: string;
  readonly connection: Awaited<ReturnType<typeof openSqliteConnection>>;
  readonly store: ReturnType<typeof getSQLiteEventStore>;
  readonly knownStreams: Set<string>;
  readonly tail: AppendedTail<TailRow>;
};

/**
 * Whether `appendInFewStatements` may take the group: distinct streams (one statement updates
 * each once), each stream's existence as its expected version says (a new stream expected at 0, a
 * known one above), and few enough events for one INSERT's parameters (7 each; SQLite allows 32,766).
 */
const groupable = (knownStreams: ReadonlySet<string>, appends: readonly WaitingAppend[]) =>
  new Set(appends.map((a) => a.stream)).size === appends.length &&
  appends.reduce((n, a) => n + a.prepared.length, 0) <= MAX_GROUPED_EVENTS &&
  appends.every((a) => a.prepared.length > 0 && (a.expectedVersion === 0n) !== knownStreams.has(a.stream));

/**
 * The same transaction as `appendInOneTransaction` makes of appends to distinct streams, with the
 * rows Emmett 0.42's `appendToStream` writes (storedRow), in at most three statements whatever
 * their number: the new streams' rows, the known streams' positions moved on, every event. Emmett
 * runs two statements per append, and each statement is a round trip through libuv's thread pool
 * and back to this thread (which DuckDB and the HTTP doors keep busy): with MCP calls each
 * appending its record, a group of four took ten round trips, 30–100 ms on a loaded machine.
 * Throws (the transaction rolls back, nothing stored) when a version is not the one expected;
 * `appendGroup` then runs each append alone through Emmett, which names the refused one.
 */
const appendInFewStatements = (
  connection: GroupCommitDeps['connection'],
  appends: readonly WaitingAppend[],
): Promise<Outcome[]> =>
  connection.withTransaction(async () => {
    const fresh = appends.filter((a) => a.expectedVersion === 0n);
    const known = appends.filter((a) => a.expectedVersion > 0n);
    if (fresh.length > 0)
      await connection.command(
        `INSERT INTO emt_streams (stream_id, stream_position, partition, stream_type, stream_metadata, is_archived)
         VALUES ${fresh.map(() => `(?, ?, '${STREAMS_PARTITION}', ?, '[]', false)`).join(', ')}`,
        fresh.flatMap((a) => [a.stream, a.prepared.length, streamTypeOf(a.stream)]),
      );
    if (known.length > 0) {
      const moved = await connection.query<{ stream_id: string; stream_position: number | string }>(
        `UPDATE emt_streams
            SET stream_position = stream_position + CASE stream_id ${known.map(() => 'WHEN ? THEN ?').join(' ')} END
          WHERE partition = '${STREAMS_PARTITION}' AND is_archived = false AND stream_id IN (${known.map(() => '?').join(', ')})
         RETURNING stream_id, CAST(stream_position AS TEXT) AS stream_position`,
        [...known.flatMap((a) => [a.stream, a.prepared.length]), ...known.map((a) => a.stream)],
      );
      const now = new Map(moved.map((m) => [m.stream_id, BigInt(m.stream_position)]));
      for (const a of known)
        if (now.get(a.stream) !== a.expectedVersion + BigInt(a.prepared.length))
          throw new StreamVersionConflict(a.stream, a.expectedVersion);
    }
    // Positions are filled in from the INSERT's answer: one writer, so they are consecutive.
    const rows = appends.map((a) =>
      a.prepared.map((e, i) => storedRow(a.stream, e, i, a.expectedVersion + 1n + BigInt(i), 0n)),
    );
    const added = await connection.query<{ global_position: number | string }>(
      `INSERT INTO emt_messages (stream_id, stream_position, partition, message_kind, message_data,
                                 message_metadata, message_schema_version, message_type, message_id, is_archived)
       VALUES ${rows.flatMap((r) => r.map(() => `(?, ?, '${PARTITION}', 'E', ?, ?, ?, ?, ?, false)`)).join(', ')}
       RETURNING CAST(global_position AS TEXT) AS global_position`,
      appends.flatMap((a, k) =>
        rows[k]!.map((r) => [
          r.stream_id,
          r.stream_position,
          r.message_data,
          r.message_metadata,
          // Emmett stores the version the append expected here.
          String(a.expectedVersion),
          r.message_type,
          r.message_id,
        ]).flat(),
      ),
    );
    const positions = added.map((r) => BigInt(r.global_position));
    const last = positions.reduce((a, b) => (a > b ? a : b), 0n);
    const first = last - BigInt(positions.length) + 1n;
    let next = first;
    return appends.map((a, k) => {
      const own = rows[k]!.map((r) => {
        const position = next++;
        return { ...r, global_position: String(position), position };
      });
      return {
        rows: own,
        result: {
          lastPosition: own.at(-1)!.position,
          streamVersion: a.expectedVersion + BigInt(a.prepared.length),
        },
      };
    });
  });

/** The appends waiting for a turn of the queue, made in one transaction (see `appendGroup`). */
const groupCommitter = ({ fileName, connection, store, knownStreams, tail }: GroupCommitDeps) => {
  /** A refusal Emmett or SQLite gave for `append`, as the log's. */
  const appendError = (append: WaitingAppend, error: unknown) =>
    // A unique-key violation on the stream or its positions is a lost race too; Emmett maps it
    // only when the error passes its instanceof check, which fails across VM realms (jest).
    isExpectedVersionConflictError(error) || (error as { code?: string }).code === 'SQLITE_CONSTRAINT'
      ? new StreamVersionConflict(append.stream, append.expectedVersion)
      : isDiskError(error)
        ? diskRefused(fileName, error)
        : error;

  /**
   * Runs `appends` in order in one transaction and answers each one's outcome; throws (the
   * transaction rolled back, nothing stored) if one of them failed otherwise than by a version
   * expected of a stream never written.
   */
  const appendInOneTransaction = async (appends: readonly WaitingAppend[]): Promise<Outcome[]> => {
    const outcomes: Outcome[] = [];
    // Streams written by the appends before, known to the ones after them before the commit.
    const created = new Set<string>();
    // In a transaction of our own: Emmett 0.42 refuses an append expecting an older version by
    // returning from its transaction, which commits the stream's position moved on with no events
    // stored, and every later append to that stream is refused. Emmett's transaction nests in
    // ours; its refusal throws out of ours, which rolls back.
    await connection.withTransaction(async () => {
      for (const append of appends) {
        // The streams are known exactly (one writer): a version expected of a stream never written
        // is a conflict (Emmett would throw a plain error).
        if (append.expectedVersion > 0n && !knownStreams.has(append.stream) && !created.has(append.stream)) {
          outcomes.push({ error: new StreamVersionConflict(append.stream, append.expectedVersion) });
          continue;
        }
        const result = await store.appendToStream(append.stream, [...append.prepared], {
          expectedStreamVersion: append.expectedVersion,
        });
        created.add(append.stream);
        // One writer, one transaction: the append took consecutive positions ending at the last one.
        const last = result.lastEventGlobalPosition;
        const version = result.nextExpectedStreamVersion;
        const n = BigInt(append.prepared.length);
        const rows = append.prepared.map((e, i) =>
          storedRow(append.stream, e, i, version - n + 1n + BigInt(i), last - n + 1n + BigInt(i)),
        );
        outcomes.push({ rows, result: { lastPosition: last, streamVersion: version } });
      }
    });
    return outcomes;
  };

  /** Answers each append of a committed transaction (the rows are in the log now). */
  const settle = (appends: readonly WaitingAppend[], outcomes: readonly Outcome[]) =>
    appends.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if ('error' in outcome) return append.reject(outcome.error);
      knownStreams.add(append.stream);
      tail.add(outcome.rows);
      append.resolve({ ...outcome.result, events: outcome.rows.map(rowToRecorded) });
    });

  /**
   * Appends to any streams, in the order they were called, in one transaction: one commit (one
   * fsync) for all, where each paid its own while every other append waited in the queue. No append
   * answers before the commit. If one is refused (rare: a single writer knows its streams' versions),
   * the transaction is rolled back and each append runs again alone, in the same order, as if
   * there had been no group: the refused one alone is refused.
   */
  const appendGroup = async (group: readonly WaitingAppend[]) => {
    if (group.length > 1) {
      const outcomes = await (
        groupable(knownStreams, group)
          ? appendInFewStatements(connection, group)
          : appendInOneTransaction(group)
      ).catch(() => undefined);
      if (outcomes) return settle(group, outcomes);
    }
    for (const append of group) {
      const outcome = await appendInOneTransaction([append]).catch((error: unknown) => [
        { error: appendError(append, error) },
      ]);
      settle([append], outcome);
    }
  };

  return appendGroup;
};

/**
 * The embedded log: one SQLite file, one connection, every operation through one queue.
 * Emmett-sqlite 0.42 shares a transaction counter per connection, so two overlapping appends (or a
 * read during someone else's append, which would see uncommitted rows) are unsafe; the queue makes
 * them impossible. SQLite does sub-millisecond work per call; what costs is each transaction's
 * commit (its fsync), so the appends waiting for the queue go in one transaction (`appendGroup`).
 * The latest appends are also held in memory (appendedTail.ts): the read model reads what was just
 * appended from there rather than with a query.
 */
export const openSqliteLog = async (
  fileName: string,
  clock: Clock,
  options: { appendedTailSize?: number } = {},
): Promise<EventLog> => {
  if (fileName !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(fileName)), { recursive: true });
  const connection = await openSqliteConnection(fileName);
  const store = getSQLiteEventStore({
    fileName,
    pool: SQLiteConnectionPool({ fileName, connectionOptions: { singleton: true, connection } }),
    schema: { autoMigration: 'CreateOrUpdate' },
  });
  const serial = serialQueue();
  const perStream = keyedMutex();

  // This process is the only writer, so the set of existing streams is known exactly: a command
  // on a new name (most creates) needs no read at all.
  const knownStreams = new Set<string>();
  const tail = await serial(async () => {
    // Forces the schema migration now rather than on the first request.
    await store.streamExists('__schema_probe__');
    const streams = await connection.query<{ stream_id: string }>('SELECT stream_id FROM emt_streams');
    for (const { stream_id } of streams) knownStreams.add(stream_id);
    const [head] = await connection.query<{ last: number | null }>(
      'SELECT max(global_position) AS last FROM emt_messages',
    );
    return new AppendedTail<TailRow>(BigInt(head?.last ?? 0), options.appendedTailSize);
  });

  /** Appends called and not yet taken by a turn of the queue. */
  const waiting: WaitingAppend[] = [];

  const appendGroup = groupCommitter({ fileName, connection, store, knownStreams, tail });

  return {
    kind: 'sqlite',
    soleWriter: true,

    readStream: (stream, afterVersion) =>
      !knownStreams.has(stream)
        ? Promise.resolve({ events: [], version: 0n })
        : serial(async () => {
            const result = await store.readStream(stream, { from: afterVersion + 1n });
            const events = result.events.map((e) => toRecorded(e.type, e.data, e.metadata));
            return { events, version: result.currentStreamVersion };
          }),

    append: (stream, events, expectedVersion, causes) => {
      const prepared = events.map((e, i) =>
        prepareForAppend(e, clock(), causes ? { cause: causes[i] } : undefined),
      );
      return new Promise<AppendResult>((resolve, reject) => {
        waiting.push({ stream, prepared, expectedVersion, resolve, reject });
        // One turn of the queue takes every append waiting by then (group commit, appendGroup).
        if (waiting.length === 1) void serial(() => appendGroup(waiting.splice(0)));
      });
    },

    readAll: (after: LogCursor, limit: number) =>
      // In the queue still, behind the appends already waiting: the read model then takes them in
      // one batch (answered at once, it made a DuckDB batch of each, and lost more than it saved).
      serial(async () => {
        // Usually the read model asking for what was just appended: answered from memory.
        const held = tail.after(after.position, limit);
        if (held) return readBatch(held.map(rowToRecorded), after);
        // Our own query rather than Emmett's batch reader: half the cost per event on replays.
        return readBatch(
          await readPageOf(connection, 'global_position > ?', [Number(after.position)], limit),
          after,
        );
      }),

    head: () =>
      serial(async () => {
        const rows = await connection.query<{ n: number; last: number | null }>(
          `SELECT count(*) AS n, max(global_position) AS last FROM emt_messages
            WHERE partition = 'emt:default' AND is_archived = FALSE`,
        );
        return { events: Number(rows[0]?.n ?? 0), position: BigInt(rows[0]?.last ?? 0) };
      }),

    eventAt: (position) =>
      serial(
        async () => (await readPageOf(connection, 'global_position = ?', [Number(position)], 1))[0] ?? null,
      ),

    eventIdAt: (position) =>
      serial(async () => {
        const [row] = await connection.query<{ message_id: string }>(
          `SELECT message_id FROM emt_messages
            WHERE partition = '${PARTITION}' AND is_archived = FALSE AND global_position = ?`,
          [Number(position)],
        );
        return row?.message_id ?? null;
      }),

    readPage: ({ after, limit, stream }) =>
      serial(() =>
        stream
          ? readPageOf(connection, 'global_position > ? AND stream_id = ?', [Number(after), stream], limit)
          : readPageOf(connection, 'global_position > ?', [Number(after)], limit),
      ),

    exclusive: (stream, work) => perStream(stream, work),

    // One process writes: its runner is woken by its own appends, there is nobody else to hear from.
    follow: () => async () => undefined,

    // Commits happen one at a time in position order: the cursor is the floor.
    unreadFloor: async (cursor) => cursor.position + 1n,

    close: () => serial(async () => connection.close()),
  };
};
