import v8 from 'node:v8';
import type * as MysqlCore from 'mysql2';
import type * as Mysql from 'mysql2/promise';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { survivingDrops } from '../eventlog/postgresConnections';
import { invalid } from '../shared/errors';
import { isKeyword, significant, tokenize } from '../shared/sqlTokens';
import { bindMysql, MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from './dialects';

/**
 * A result from an external database, typed in DuckDB's terms so it can join local tables. `cut`:
 * the database had more than the read's ceiling (`ReadCeiling`), and the driver stopped reading
 * there: `rows` holds what came before the bound it names.
 */
export type ExternalResult = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  cut?: ReadCut;
};

/** The bound a read stopped at: more rows than `limit`, or more than `limit` bytes of cell text. */
export type ReadCut = { by: 'rows' | 'bytes'; limit: number };

/** A cut as its refusals say it: `1000 rows`, `1048576 bytes of text`. */
export const cutText = (cut: ReadCut) => `${cut.limit} ${cut.by === 'rows' ? 'rows' : 'bytes of text'}`;

/** What one read (`query`, `readOnlyQuery`) may bring into this process before the driver stops reading it. */
export type ReadCeiling = { rows: number; bytes: number };

/** Rows one read from an external database may bring (a mixed query's fetch, a native query). */
export const FETCH_LIMIT = 1_000_000;

/**
 * Bytes of cell text one read may bring: a quarter of Node's heap limit, at most 1 GiB. The rows
 * live in the heap as they arrive (strings of one or two bytes a character, each with its header)
 * and are copied again on their way out (into DuckDB, or into an answer), beside every other query's
 * work: a read past this would end the process (`JavaScript heap out of memory`) rather than the
 * query. With the default heap of a machine with 16 GiB or more (about 4 GiB) that is 1 GiB; under
 * `--max-old-space-size=256`, 64 MiB.
 */
export const FETCH_BYTES = Math.min(2 ** 30, Math.floor(v8.getHeapStatistics().heap_size_limit / 4));

const READ_CEILING: ReadCeiling = { rows: FETCH_LIMIT, bytes: FETCH_BYTES };

/** How one call reads: its limit, its caller's stop, and how many rows it wants at most. */
export type ReadCall = {
  /**
   * Shortens the call's limit: a statement's caller passes what is left of its own deadline (less
   * a margin), so the error that names this database comes first.
   */
  timeoutMs?: number;
  /** Stops the call when its caller stops: the connection is destroyed, the rest of the result unread. */
  signal?: AbortSignal;
  /**
   * Fewer rows than the read's ceiling (a training read under TRAIN_ROW_LIMIT): the driver stops
   * one row past them, answering the cut, so the database sends no more than the caller can use.
   */
  rows?: number;
};

/** The call's own bound on rows, under the driver's ceiling. */
const ceilingOf = (ceiling: ReadCeiling, call: ReadCall): ReadCeiling =>
  call.rows === undefined ? ceiling : { ...ceiling, rows: Math.min(ceiling.rows, call.rows) };

/**
 * A cell's share of a read's bytes, counted as it arrives: text by its length, binary by its size, a
 * parsed JSON value by its text's, anything else (numbers, dates, NULL) as 8.
 */
const cellBytes = (v: unknown): number => {
  if (typeof v === 'string') return v.length;
  if (Buffer.isBuffer(v)) return v.length;
  if (v !== null && typeof v === 'object' && !(v instanceof Date)) return JSON.stringify(v)?.length ?? 8;
  return 8;
};

/** Counts a read's rows and bytes as they arrive: `add` answers the bound a row passes, if any. */
class ReadMeter {
  rows = 0;
  bytes = 0;
  constructor(readonly ceiling: ReadCeiling) {}
  add(row: unknown[]): ReadCut | undefined {
    if (this.rows + 1 > this.ceiling.rows) return { by: 'rows', limit: this.ceiling.rows };
    let bytes = 0;
    for (const v of row) bytes += cellBytes(v);
    if (this.bytes + bytes > this.ceiling.bytes) return { by: 'bytes', limit: this.ceiling.bytes };
    this.rows++;
    this.bytes += bytes;
    return undefined;
  }
}

type ConnectionParameters = Record<string, unknown>;

/** One connection pool to one external database, whatever its engine. */
export interface ExternalDatabase {
  readonly engine: string;
  /** How SQL is written for this database: quoting, literals, placeholders. */
  readonly dialect: SqlDialect;
  /**
   * Runs one statement in the database's own dialect, its placeholders (`dialect.placeholder(n)`)
   * bound to `params` in order. Without parameters the text goes to the server byte for byte.
   */
  query(sql: string, params?: unknown[], call?: ReadCall): Promise<ExternalResult>;
  /**
   * Runs one SELECT for a caller who may not write (src/sql/pushdownAllowList.ts): in a read-only
   * transaction, rolled back afterwards, under a server-side time limit of `call.timeoutMs`. PostgreSQL:
   * `BEGIN READ ONLY` + `SET LOCAL statement_timeout`; MariaDB: `START TRANSACTION READ ONLY` +
   * `SET STATEMENT max_statement_time=… FOR`; MySQL: the same transaction + a `MAX_EXECUTION_TIME`
   * hint on its top-level SELECT (`withExecutionTimeHint`).
   */
  readOnlyQuery(
    sql: string,
    params: unknown[],
    call: ReadCall & { timeoutMs: number },
  ): Promise<ExternalResult>;
  /** Quotes an identifier in this dialect (`dialect.quote`). */
  quote(identifier: string): string;
  /**
   * A table of the registered database, qualified by its schema (PostgreSQL) or database (MySQL):
   * every name we send names what it means whatever the connection's search path.
   */
  qualify(table: string): string;
  /** What `qualify` qualifies by: the schema (PostgreSQL, `public` unless registered otherwise) or database. */
  readonly namespace: string | undefined;
  listTables(): Promise<string[]>;
  /**
   * Every column of the tables `listTables` lists, in order: TABLE_NAME, COLUMN_NAME,
   * ORDINAL_POSITION, DATA_TYPE (the database's own type name), IS_NULLABLE.
   */
  listColumns(): Promise<ExternalResult>;
  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when
   * it throws (all or nothing). Its statements answer how many rows they changed.
   */
  transaction<T>(
    work: (run: (sql: string, params?: unknown[]) => Promise<{ affected: number }>) => Promise<T>,
  ): Promise<T>;
  close(): Promise<void>;
}

const COLUMN_LISTING: ExternalResult['columns'] = [
  { name: 'TABLE_NAME', type: 'VARCHAR' },
  { name: 'COLUMN_NAME', type: 'VARCHAR' },
  { name: 'ORDINAL_POSITION', type: 'BIGINT' },
  { name: 'DATA_TYPE', type: 'VARCHAR' },
  { name: 'IS_NULLABLE', type: 'VARCHAR' },
];
const COLUMN_LISTING_SQL = (placeholder: string) =>
  `SELECT table_name, column_name, ordinal_position, data_type, is_nullable FROM information_schema.columns
     WHERE table_schema = ${placeholder} ORDER BY table_name, ordinal_position`;

export type DriverOptions = {
  connectTimeoutMs: number;
  queryTimeoutMs: number;
  /** What one read may bring (FETCH_LIMIT rows, FETCH_BYTES of text unless given: specs shrink it). */
  ceiling?: ReadCeiling;
};

/** The connections each external database's pool holds at most (PostgreSQL and MySQL-like alike). */
export const POOL_SLOTS = 4;

/**
 * How long a pool's connection attempt may last: never past the statement limit. A call gives up at
 * its deadline, but the attempt it started keeps its pool slot until the attempt ends: with a 1 s
 * statement limit and a 5 s connect timeout, four calls to a peer that accepts and never answers
 * held all four slots for 5 s after they had failed, and the next call found none. Ending an attempt
 * at the statement limit (a little after the call's own deadline, `remoteLimitMs`, so the call's
 * error is the one that names its deadline) frees the slot with its call.
 */
const connectLimitMs = (o: DriverOptions) => Math.min(o.connectTimeoutMs, o.queryTimeoutMs);

/**
 * How long one call may wait for the external database, connecting included: the SQL statement's
 * limit less a tenth (at most a second), so the caller hears which database did not answer before
 * its own deadline speaks in general terms (src/sql/deadline.ts).
 */
export const remoteLimitMs = (queryTimeoutMs: number) =>
  Math.max(1, queryTimeoutMs - Math.min(1000, Math.floor(queryTimeoutMs / 10)));

/** A caller's limit for one call, never past the driver's own. */
const within = (timeoutMs: number, limitMs: number) => Math.max(1, Math.floor(Math.min(timeoutMs, limitMs)));

/** A server-side statement limit inside a call's own `ms`: a tenth earlier, so the server's error wins the race. */
const serverLimitMs = (ms: number) => Math.max(1, Math.floor(ms * 0.9));

/** The error of a call that got no answer in time: names the server (the caller adds the integration). */
const noAnswer = (engine: string, p: ConnectionParameters, fallbackPort: number, ms: number) =>
  Object.assign(
    new Error(
      `${engine} at ${str(p.host)}:${port(p.port, fallbackPort)} did not answer within ${ms} ms (timeout)`,
    ),
    { code: 'ETIMEDOUT' },
  );

/**
 * Runs `use` on a connection of the pool, within `ms` from now, the wait for a connection included.
 * Past it the call fails with `timedOut()` and the connection is destroyed, not put back: one stuck
 * in a handshake or half a result must not hold its pool slot (nor answer the next caller's query).
 * A connection the pool hands over only after the call gave up was never used: it goes back whole
 * (`unused`). Destroyed, every call that expired waiting in the pool's queue (mysql2's has no limit
 * of its own) cost the customer's database a connection closed and, at the next call, opened again.
 * `signal` stops the call the same way when its caller stops (the client left, the server's memory,
 * a shutdown): without it a stopped query's read went on to its end, the customer's database sending
 * every row (up to a read's ceiling) into a process that no longer wanted them.
 */
const leased = <C, T>(
  ms: number,
  acquire: () => Promise<C>,
  destroy: (connection: C) => void,
  unused: (connection: C) => void,
  use: (connection: C) => Promise<T>,
  timedOut: () => Error,
  signal?: AbortSignal,
): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    if (signal?.aborted) return reject(stoppedBy(signal));
    let expired = false;
    let held: C | undefined;
    const settled = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onStop);
    };
    const giveUp = (error: Error) => {
      expired = true;
      settled();
      if (held !== undefined) destroy(held);
      reject(error);
    };
    const timer = setTimeout(() => giveUp(timedOut()), ms);
    const onStop = () => giveUp(stoppedBy(signal!));
    signal?.addEventListener('abort', onStop, { once: true });
    acquire().then(
      (connection) => {
        if (expired) return unused(connection);
        held = connection;
        use(connection).then(
          (value) => {
            settled();
            if (!expired) resolve(value);
          },
          (error: unknown) => {
            settled();
            if (!expired) reject(error as Error);
          },
        );
      },
      (error: unknown) => {
        settled();
        if (!expired) reject(error as Error);
      },
    );
  });

/** The error of a call its caller stopped: the caller's reason when it gave one. */
const stoppedBy = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new Error('The call was stopped by its caller');

const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
const port = (v: unknown, fallback: number) =>
  v === undefined || v === null || v === '' ? fallback : Number(v);

// PostgreSQL type OIDs → DuckDB types (anything else arrives as text).
const PG_TYPES: Record<number, string> = {
  16: 'BOOLEAN',
  20: 'BIGINT',
  21: 'BIGINT',
  23: 'BIGINT',
  700: 'DOUBLE',
  701: 'DOUBLE',
  1700: 'DOUBLE',
  1082: 'DATE',
  1114: 'TIMESTAMP',
  1184: 'TIMESTAMP',
};

/**
 * Rows a cursor asks for first (one round trip for most answers); later batches hold about 4 MiB
 * each by the rows read so far (a sixteenth of the ceiling when that is less), 50,000 rows at most: a
 * read passes its ceiling of bytes by one batch at most, the first one's 100 rows aside.
 */
const FIRST_BATCH = 100;
const MOST_BATCH = 50_000;
const batchBytes = (ceiling: ReadCeiling) => Math.min(4 * 2 ** 20, ceiling.bytes / 16);

/** The rows a cursor asks for next: never more than one past the ceiling. */
const nextBatch = (meter: ReadMeter) => {
  const left = meter.ceiling.rows - meter.rows + 1;
  if (meter.rows === 0) return Math.min(FIRST_BATCH, left);
  const perRow = Math.max(1, meter.bytes / meter.rows);
  return Math.max(1, Math.min(left, MOST_BATCH, Math.floor(batchBytes(meter.ceiling) / perRow)));
};

/**
 * A cursor whose `callback` pg sets when it arms its read timeout (query_timeout) for the cursor:
 * the callback clears that timer, and a cursor never calls it itself (see `cursorRead`).
 */
class TimedCursor extends Cursor<unknown[]> {
  declare callback?: () => void;
}

/**
 * Reads one statement through a cursor (a portal of the extended protocol, a batch of rows a round
 * trip) and stops once a row passes the ceiling: the server never sends the rest. Rows are counted
 * as they arrive, not when their batch is complete: the first batch's 100 rows of 3 MB each ended a
 * process with a 256 MB heap before any bound was checked. A row past the rows' bound is the last
 * one asked for, so the portal is closed after its batch (the transaction it ran in, implicit or the
 * caller's, goes on); a row past the bytes' bound may come in the middle of a batch, so the client
 * is destroyed there (`broke`), its socket closed on whatever the server was still sending. A read
 * that fails leaves the client to be destroyed, as any failed call does.
 */
const cursorRead = async (
  client: pg.PoolClient,
  { text, values }: { text: string; values: unknown[] },
  ceiling: ReadCeiling,
  broke: (e: Error) => void,
): Promise<ExternalResult> => {
  const cursor = client.query(new TimedCursor(text, values, { rowMode: 'array' }));
  let fields: pg.FieldDef[] = [];
  const columns = () => fields.map((f) => ({ name: f.name, type: PG_TYPES[f.dataTypeID] ?? 'VARCHAR' }));
  const meter = new ReadMeter(ceiling);
  const rows: unknown[][] = [];
  let cut: ReadCut | undefined;
  let inBatch = 0;
  cursor.on('row', (row: unknown[], result: pg.QueryResult) => {
    if (cut) return;
    fields = result.fields;
    inBatch++;
    cut = meter.add(row);
    if (!cut) rows.push(row);
    else if (cut.by === 'bytes') broke(new Error(`the read passed its bound of ${cutText(cut)}`));
  });
  const read = (asked: number) =>
    new Promise<void>((resolve, reject) =>
      cursor.read(asked, (error, _rows, result) => {
        if (error) return reject(error);
        // A cursor read again after its end answers no rows and no result.
        if (result) fields = result.fields;
        resolve();
      }),
    );
  try {
    for (;;) {
      const asked = nextBatch(meter);
      inBatch = 0;
      try {
        await read(asked);
      } catch (error) {
        // The client was destroyed under the batch: the rows before the bound are the answer.
        if (cut?.by === 'bytes') return { columns: columns(), rows, cut };
        throw error;
      }
      if (cut) {
        if (cut.by === 'rows') await cursor.close();
        return { columns: columns(), rows, cut };
      }
      if (inBatch < asked) return { columns: columns(), rows };
    }
  } finally {
    // pg arms its read timeout (query_timeout) for every query it is given and clears it through the
    // query's callback, which a cursor never calls: left armed, it would hold the process open for
    // that long after the read, then fail the finished cursor.
    cursor.callback?.();
  }
};

const postgres = (p: ConnectionParameters, o: DriverOptions): ExternalDatabase => {
  const schema = str(p.schema) ?? 'public';
  const pool = new pg.Pool({
    host: str(p.host),
    port: port(p.port, 5432),
    user: str(p.user),
    password: str(p.password),
    database: str(p.database),
    max: POOL_SLOTS,
    connectionTimeoutMillis: connectLimitMs(o),
    statement_timeout: remoteLimitMs(o.queryTimeoutMs),
    query_timeout: o.queryTimeoutMs + 1000,
    idleTimeoutMillis: 30_000,
    // Our literals are exact only with standard_conforming_strings on (src/integrations/dialects.ts).
    options: `-c search_path=${schema} -c standard_conforming_strings=on`,
  });
  // A client whose server went away (idle, or checked out between two statements) must not crash
  // the process; the next query reconnects.
  survivingDrops(pool);
  const ceiling = o.ceiling ?? READ_CEILING;
  // The extended protocol for every statement: one statement a message (a text that smuggles a
  // `COMMIT; …` past a read-only transaction is refused by the server), the text as it was written.
  const statement = (text: string, params: unknown[]) => ({
    text,
    values: params.map((v) => (typeof v === 'bigint' ? v.toString() : v)),
    queryMode: 'extended' as const,
  });
  const limitMs = remoteLimitMs(o.queryTimeoutMs);
  /**
   * One call on a pooled client within `ms`: released when it went well, destroyed when it failed
   * (as `pool.query` does) or ran out of time: a client left in half a result must not hold its slot.
   */
  const onClient = <T>(
    ms: number,
    use: (client: pg.PoolClient, broke: (e: Error) => void) => Promise<T>,
    signal?: AbortSignal,
  ) =>
    leased(
      ms,
      () => pool.connect(),
      (client) => client.release(new Error('the call was given up (its time limit, or its caller stopped)')),
      (client) => client.release(),
      async (client) => {
        let released = false;
        const release = (error?: Error) => {
          if (released) return;
          released = true;
          client.release(error);
        };
        let value: T;
        try {
          // A broken client is destroyed at once: its socket closed, whatever was still on its way.
          value = await use(client, release);
        } catch (error) {
          release(error as Error);
          throw error;
        }
        release();
        return value;
      },
      () => noAnswer('postgres', p, 5432, ms),
      signal,
    );
  return {
    engine: 'postgres',
    dialect: POSTGRES_DIALECT,
    quote: POSTGRES_DIALECT.quote,
    namespace: schema,
    qualify: (table) => `${POSTGRES_DIALECT.quote(schema)}.${POSTGRES_DIALECT.quote(table)}`,
    query: (sql, params = [], call = {}) =>
      onClient(
        within(call.timeoutMs ?? limitMs, limitMs),
        (client, broke) => cursorRead(client, statement(sql, params), ceilingOf(ceiling, call), broke),
        call.signal,
      ),
    readOnlyQuery: (sql, params, call) => {
      const ms = within(call.timeoutMs, limitMs);
      // A statement that fails destroys its client, which ends the transaction with it. The server's
      // own limit comes first (its error says which); ours stands behind it for a peer that hangs.
      // In the extended protocol the server's limit runs per message: each batch the cursor asks for.
      return onClient(
        ms,
        async (client, broke) => {
          await client.query(
            `BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${serverLimitMs(ms)}`,
          );
          const result = await cursorRead(client, statement(sql, params), ceilingOf(ceiling, call), broke);
          // A client destroyed under its read ended its transaction with it.
          if (result.cut?.by !== 'bytes') await client.query('ROLLBACK').catch(broke);
          return result;
        },
        call.signal,
      );
    },
    transaction: async (work) => {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(async (sql, params = []) => {
          const r = await client.query(statement(sql, params));
          return { affected: r.rowCount ?? 0 };
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw error;
      } finally {
        // A client whose ROLLBACK failed (timed out, connection lost) is destroyed, not reused.
        client.release(broken);
      }
    },
    listTables: () =>
      onClient(limitMs, async (client) => {
        const r = await client.query<{ table_name: string }>(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
          [schema],
        );
        return r.rows.map((x) => x.table_name);
      }),
    listColumns: () =>
      onClient(limitMs, async (client) => {
        const r = await client.query({ text: COLUMN_LISTING_SQL('$1'), values: [schema], rowMode: 'array' });
        return { columns: COLUMN_LISTING, rows: r.rows as unknown[][] };
      }),
    close: () => pool.end(),
  };
};

/**
 * MySQL's per-statement time limit is an optimizer hint right after the SELECT of the statement's
 * top-level query block (found by the tokenizer, past comments): its first SELECT, or after a WITH
 * clause the first SELECT outside parentheses. A text with neither (`(SELECT …) UNION …`) goes
 * unhinted: the call's own limit still ends it on our side.
 */
export const withExecutionTimeHint = (sql: string, ms: number) => {
  const tokens = significant(tokenize(sql, 'mysql-client'));
  if (!isKeyword(sql, tokens[0], 'SELECT') && !isKeyword(sql, tokens[0], 'WITH')) return sql;
  let depth = 0;
  const top = tokens.find((t) => {
    if (t.kind === 'symbol' && sql[t.start] === '(') depth++;
    else if (t.kind === 'symbol' && sql[t.start] === ')') depth--;
    return depth === 0 && isKeyword(sql, t, 'SELECT');
  });
  if (!top) return sql;
  return `${sql.slice(0, top.end)} /*+ MAX_EXECUTION_TIME(${ms}) */${sql.slice(top.end)}`;
};

// mysql2 column type codes → DuckDB types.
const MYSQL_TYPES: Record<number, string> = {
  1: 'BIGINT',
  2: 'BIGINT',
  3: 'BIGINT',
  8: 'BIGINT',
  9: 'BIGINT',
  4: 'DOUBLE',
  5: 'DOUBLE',
  0: 'DOUBLE',
  246: 'DOUBLE',
  10: 'DATE',
  7: 'TIMESTAMP',
  12: 'TIMESTAMP',
  16: 'BOOLEAN',
};

/** mysql2's callback connection under a pool connection, with its socket. */
type CoreConnection = MysqlCore.Connection & { stream: { destroy(): void } };

const isCoreConnection = (c: unknown): c is CoreConnection =>
  typeof c === 'object' && c !== null && 'stream' in c && 'pause' in c && 'query' in c;

/**
 * The callback connection a promise pool connection wraps (mysql2 keeps it as `connection`, which
 * its typings name the promise class): rows are read from its events as they arrive.
 */
const coreOf = (connection: Mysql.PoolConnection): CoreConnection => {
  const core: unknown = connection.connection;
  if (!isCoreConnection(core)) throw new Error('mysql2: a pool connection without its callback connection');
  return core;
};

/**
 * Reads one statement's rows as they arrive and stops once a row passes the ceiling: the connection
 * stops reading its socket there, and the caller discards it (a result cannot be left half read).
 * Only the statement's first result is read (a `CALL` may answer several). No time limit of mysql2's:
 * the call's lease ends it (`leased` destroys the connection at its limit, or when its caller stops),
 * and a mysql2 timer beside it outlived the connection it was for, holding it until it fired.
 */
const streamRead = (connection: Mysql.PoolConnection, options: { sql: string }, ceiling: ReadCeiling) =>
  new Promise<ExternalResult>((resolve, reject) => {
    const core = coreOf(connection);
    const meter = new ReadMeter(ceiling);
    let columns: ExternalResult['columns'] = [];
    const rows: unknown[][] = [];
    let settled = false;
    const query = core.query({ ...options, rowsAsArray: true });
    query.on('fields', (fields: MysqlCore.FieldPacket[] | undefined, index?: number) => {
      if (fields && !index && columns.length === 0)
        columns = fields.map((f) => ({ name: f.name, type: MYSQL_TYPES[f.columnType ?? -1] ?? 'VARCHAR' }));
    });
    query.on('result', (row: unknown, index?: number) => {
      // Not a row: a statement's header (INSERT, SET), or a later result.
      if (settled || !Array.isArray(row) || index) return;
      const cut = meter.add(row as unknown[]);
      if (cut === undefined) return void rows.push(row as unknown[]);
      settled = true;
      core.pause();
      resolve({ columns, rows, cut });
    });
    query.on('error', (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
    query.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ columns, rows });
    });
  });

const mysqlLike = (engine: string, p: ConnectionParameters, o: DriverOptions): ExternalDatabase => {
  const database = str(p.database);
  // mysql2 is loaded by the first MySQL-like connection, not at start: a process that connects to
  // none never needs its 90 modules.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pool = (require('mysql2/promise') as typeof Mysql).createPool({
    host: str(p.host),
    port: port(p.port, 3306),
    user: str(p.user),
    password: str(p.password),
    database,
    connectionLimit: POOL_SLOTS,
    connectTimeout: connectLimitMs(o),
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
  });
  const ceiling = o.ceiling ?? READ_CEILING;
  const limitMs = remoteLimitMs(o.queryTimeoutMs);
  /**
   * Out of the pool and its socket closed at once: mysql2's `destroy` only ends our side of the
   * socket, which then goes on receiving (and parsing) whatever the server still sends.
   */
  const discard = (connection: Mysql.PoolConnection) => {
    connection.destroy();
    coreOf(connection).stream.destroy();
  };
  /**
   * One call on a pooled connection within `ms` (the wait for a free one and its handshake
   * included): released when it went well, destroyed when it failed or ran out of time, so a
   * connection stuck in a handshake or a statement never holds one of the pool's slots.
   */
  const onConnection = <T>(
    ms: number,
    use: (connection: Mysql.PoolConnection, broke: () => void) => Promise<T>,
    signal?: AbortSignal,
  ) =>
    leased(
      ms,
      () => pool.getConnection(),
      discard,
      (connection) => connection.release(),
      async (connection) => {
        let broken = false;
        let value: T;
        try {
          value = await use(connection, () => (broken = true));
        } catch (error) {
          if (
            (error as { fatal?: boolean }).fatal ||
            (error as { code?: string }).code === 'PROTOCOL_SEQUENCE_TIMEOUT'
          )
            connection.destroy();
          else connection.release();
          throw error;
        }
        if (broken) discard(connection);
        else connection.release();
        return value;
      },
      () => noAnswer(engine, p, 3306, ms),
      signal,
    );
  // MariaDB and MySQL limit a statement's time differently; which one this is, asked once.
  let mariadb: boolean | undefined;
  const isMariadb = async (connection: Mysql.PoolConnection) =>
    (mariadb ??= /mariadb/i.test(
      String(((await connection.query('SELECT VERSION() AS v'))[0] as { v: string }[])[0]?.v),
    ));
  return {
    engine,
    dialect: MYSQL_DIALECT,
    quote: MYSQL_DIALECT.quote,
    namespace: database,
    qualify: (table) =>
      database === undefined
        ? MYSQL_DIALECT.quote(table)
        : `${MYSQL_DIALECT.quote(database)}.${MYSQL_DIALECT.quote(table)}`,
    query: (sql, params = [], call = {}) => {
      const ms = within(call.timeoutMs ?? limitMs, limitMs);
      return onConnection(
        ms,
        async (connection, broke) => {
          const result = await streamRead(
            connection,
            { sql: bindMysql(sql, params) },
            ceilingOf(ceiling, call),
          );
          // Cut in the middle of a result: the connection cannot be used again.
          if (result.cut) broke();
          return result;
        },
        call.signal,
      );
    },
    readOnlyQuery: (sql, params, call) => {
      const ms = within(call.timeoutMs, limitMs);
      const text = bindMysql(sql, params);
      return onConnection(
        ms,
        async (connection, broke) => {
          // The server's own limit first (its error says which); ours stands behind it.
          const limited = (await isMariadb(connection))
            ? `SET STATEMENT max_statement_time=${serverLimitMs(ms) / 1000} FOR ${text}`
            : withExecutionTimeHint(text, serverLimitMs(ms));
          await connection.query('START TRANSACTION READ ONLY');
          let result: ExternalResult;
          try {
            result = await streamRead(connection, { sql: limited }, ceilingOf(ceiling, call));
          } catch (error) {
            await connection.query('ROLLBACK').catch(broke);
            throw error;
          }
          // A connection cut in the middle of a result is closed, which ends its transaction.
          if (result.cut) broke();
          else await connection.query('ROLLBACK').catch(broke);
          return result;
        },
        call.signal,
      );
    },
    transaction: async (work) => {
      const connection = await pool.getConnection();
      let broken = false;
      try {
        await connection.beginTransaction();
        const result = await work(async (sql, params = []) => {
          const [header] = await connection.query({ sql: bindMysql(sql, params), timeout: o.queryTimeoutMs });
          return { affected: (header as { affectedRows?: number }).affectedRows ?? 0 };
        });
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback().catch(() => (broken = true));
        throw error;
      } finally {
        // A connection whose ROLLBACK failed (timed out, lost) is destroyed, not reused.
        if (broken) connection.destroy();
        else connection.release();
      }
    },
    listTables: () =>
      onConnection(limitMs, async (connection) => {
        const [rows] = await connection.query(
          'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name',
          [database],
        );
        return (rows as { t: string }[]).map((r) => r.t);
      }),
    listColumns: () =>
      onConnection(limitMs, async (connection) => {
        const [rows] = await connection.query({
          sql: COLUMN_LISTING_SQL('?'),
          values: [database],
          rowsAsArray: true,
        });
        return { columns: COLUMN_LISTING, rows: Array.isArray(rows) ? (rows as unknown[][]) : [] };
      }),
    close: () => pool.end(),
  };
};

export const connect = (
  engine: string,
  parameters: ConnectionParameters,
  options: DriverOptions,
): ExternalDatabase => {
  switch (engine.toLowerCase()) {
    case 'postgres':
      return postgres(parameters, options);
    case 'mysql':
    case 'mariadb':
      return mysqlLike(engine.toLowerCase(), parameters, options);
    default:
      throw invalid(`Unknown engine '${engine}'`);
  }
};

/** Opens a connection, runs `SELECT 1`, closes: the driver's message when anything fails. */
export const checkConnection = async (
  engine: string,
  parameters: ConnectionParameters,
  options: DriverOptions,
): Promise<{ ok: true } | { ok: false; message: string }> => {
  const db = connect(engine, parameters, options);
  try {
    await db.query('SELECT 1');
    return { ok: true };
  } catch (error) {
    const e = error as { message?: string; code?: string };
    return { ok: false, message: e.message || e.code || String(error) };
  } finally {
    await db.close().catch(() => undefined);
  }
};
