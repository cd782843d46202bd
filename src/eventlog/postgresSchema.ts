import type pg from 'pg';
import { inSchemaTurn } from '../shared/pgTurns';
import { APPENDED_CHANNEL } from './postgresNews';

/*
 * What mindledger adds to the schema Emmett creates (emmett-postgresql 0.42: the partitioned table
 * `emt_messages`, filled only by its function `emt_append_to_stream`).
 */

const ANNOUNCE = 'mindledger_announce_appended';
const TAIL_INDEX = 'mindledger_messages_tail';

/**
 * 1. Every transaction that appends announces itself at commit: a statement-level trigger calls
 *    `pg_notify` with the transaction id. PostgreSQL delivers it only if the transaction commits and
 *    folds identical notifications of one transaction into one, so an append costs no extra round
 *    trip and a multi-statement append is announced once.
 * 2. An index in the tail's order (transaction id, position): without it each read of the tail
 *    scans the whole log (10 ms at 50,000 events, 0.7 ms with it), and with notifications every
 *    process reads the tail after every append.
 *
 * Processes starting together on a fresh database would race on the catalog (`CREATE OR REPLACE`,
 * `CREATE TRIGGER`, `CREATE INDEX IF NOT EXISTS` are not safe against themselves), so a
 * transaction-scoped advisory lock makes them take turns. Trigger and index are created only when
 * missing: creating either locks appends out meanwhile (the index once, for as long as it takes to
 * build over the log already there).
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
    const { rows: index } = await client.query<{ found: string | null }>(
      `SELECT to_regclass($1)::text AS found`,
      [TAIL_INDEX],
    );
    if (index[0]?.found == null)
      await client.query(`CREATE INDEX ${TAIL_INDEX} ON emt_messages (transaction_id, global_position)`);
  });
