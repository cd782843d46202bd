import type pg from 'pg';
import { inSchemaTurn } from '../shared/pgTurns';
import { APPENDED_CHANNEL } from './postgresNews';

/*
 * What mindledger adds to the schema Emmett creates (emmett-postgresql 0.42: the partitioned table
 * `emt_messages`, filled only by its function `emt_append_to_stream`).
 */

const ANNOUNCE = 'mindledger_announce_appended';
const TAIL_INDEX = 'mindledger_messages_tail';
const POSITION_INDEX = 'mindledger_messages_position';

/** The indexes mindledger adds, by name: what each one serves is said on `extendEmmettSchema`. */
const INDEXES: ReadonlyArray<readonly [name: string, columns: string]> = [
  [TAIL_INDEX, 'transaction_id, global_position'],
  [POSITION_INDEX, 'global_position'],
];

/**
 * 1. Every transaction that appends announces itself at commit: a statement-level trigger calls
 *    `pg_notify` with the transaction id. PostgreSQL delivers it only if the transaction commits and
 *    folds identical notifications of one transaction into one, so an append costs no extra round
 *    trip and a multi-statement append is announced once.
 * 2. An index in the tail's order (transaction id, position): without it each read of the tail
 *    scans the whole log (10 ms at 50,000 events, 0.7 ms with it), and with notifications every
 *    process reads the tail after every append.
 * 3. An index on the position alone, for the statements that look events up by position without
 *    their transaction id: `eventIdAt` (every readiness probe and every start checks with it that
 *    the log still holds the read model's last event) and `readPage` (audits' pages, one event at a
 *    position). The tail's index leads with the transaction id, so without this one, at 200,000
 *    events, `eventIdAt` read the whole of that index (3-22 ms) and a page of 500 every row after
 *    its position (70-290 ms), against 0.02-0.09 ms and 0.4-0.8 ms with it. The position only grows,
 *    so each append adds to the index's rightmost page: appends per second were unchanged within
 *    the machine's noise.
 *
 * Processes starting together on a fresh database would race on the catalog (`CREATE OR REPLACE`,
 * `CREATE TRIGGER`, `CREATE INDEX IF NOT EXISTS` are not safe against themselves), so a
 * transaction-scoped advisory lock makes them take turns. Trigger and indexes are created only when
 * missing: creating any of them locks appends out meanwhile (an index once, for as long as it takes
 * to build over the log already there: 0.13 s for the position's at 200,000 events).
 */
export const extendEmmettSchema = (pool: pg.Pool) =>
  inSchemaTurn(pool, ANNOUNCE, async (client) => {
    await client.query(
      `CREATE OR REPLACE FUNCTION ${ANNOUNCE}() RETURNS trigger LANGUAGE plpgsql AS $body$
       BEGIN
         PERFORM pg_notify('${APPENDED_CHANNEL}', pg_current_xact_id()::text);
         RETURN NULL;
       END $body$`,
    );
    const { rowCount: triggers } = await client.query(
      `SELECT 1 FROM pg_trigger WHERE tgrelid = 'emt_messages'::regclass AND tgname = $1`,
      [ANNOUNCE],
    );
    if (!triggers)
      await client.query(
        `CREATE TRIGGER ${ANNOUNCE} AFTER INSERT ON emt_messages FOR EACH STATEMENT EXECUTE FUNCTION ${ANNOUNCE}()`,
      );
    for (const [name, columns] of INDEXES) {
      const { rows: index } = await client.query<{ found: string | null }>(
        `SELECT to_regclass($1)::text AS found`,
        [name],
      );
      if (index[0]?.found == null) await client.query(`CREATE INDEX ${name} ON emt_messages (${columns})`);
    }
  });

/**
 * A leaf this small (some 1,700 events) is sorted whole in memory in a millisecond or two: not worth
 * analyzing at every open while the log is new and empty.
 */
const TINY_BYTES = 256 * 1024;

/**
 * The columns the log's own statements filter, join and order on (postgres.ts): what the planner
 * needs to read a page by the tail's index.
 */
const READ_COLUMNS = 'transaction_id, global_position, is_archived, stream_id, message_id';

/**
 * Gives the log's planner statistics when it has none: a log just written in bulk (restored from a
 * dump, loaded, seeded), before autovacuum analyzed it, or on a server running without autovacuum.
 * Without statistics PostgreSQL guesses that a page's conditions keep about one row in eighteen, and
 * for a page of 5,000 rows of a log under some 300,000 events it then fetches every row after the
 * cursor by a bitmap scan and sorts them all (on disk) to keep 5,000: 70-90 ms a page at position
 * 50,000 of 100,000 events against 3 ms by the index, so reading the whole log grew with the square
 * of its length. No shape of the page's query makes the index win without statistics (PostgreSQL has
 * no hints, and an index scan without a correlation is costed as random reads), so the log is
 * analyzed instead, once: a leaf partition of `emt_messages` (the rows are in Emmett's leaves; the
 * planner reads a leaf's statistics) that holds more than 256 KB and has no statistics for
 * `transaction_id` in `pg_stats` (kept in the catalog, unlike `pg_stat_user_tables`, which a crash
 * or a statistics reset empties). Only the columns read by the log are analyzed: 0.12 s at 100,000
 * events, 0.3 s at 1,000,000 (a sample of 30,000 rows either way). ANALYZE does not lock appends out (SHARE UPDATE EXCLUSIVE); processes opening together
 * take turns, and the later ones find the statistics made. A role that does not own the table gets
 * a warning from PostgreSQL and no statistics, as before.
 */
export const analyzeIfNeverAnalyzed = (pool: pg.Pool) =>
  inSchemaTurn(pool, 'mindledger_log_statistics', async (client) => {
    const { rows } = await client.query<{ leaf: string }>(
      `SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS leaf
         FROM pg_catalog.pg_partition_tree('emt_messages'::regclass) t
         JOIN pg_catalog.pg_class c ON c.oid = t.relid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE t.isleaf AND pg_catalog.pg_relation_size(t.relid) > $1
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stats s
                           WHERE s.schemaname = n.nspname AND s.tablename = c.relname
                             AND s.attname = 'transaction_id')`,
      [TINY_BYTES],
    );
    for (const { leaf } of rows) await client.query(`ANALYZE ${leaf} (${READ_COLUMNS})`);
  });
