/**
 * A PostgreSQL log written in bulk and never analyzed (restored from a dump, loaded, seeded, on a
 * server without autovacuum or before it came by) is read a page at a time by the tail's index, not
 * by sorting every row after the cursor: opening the log gives the planner the statistics it lacks
 * (src/eventlog/postgresSchema.ts, `analyzeIfNeverAnalyzed`). Without them a page of 250 out of
 * 3,000 events is planned as a bitmap scan and a sort of all the rows after the cursor.
 */
import type pg from 'pg';
import { pageAfter } from '../../src/eventlog/postgres';
import { appendProjects, planNodes, withLogDatabase } from '../support/postgresLogPlans';

const EVENTS = 3000;
const PAGE = 250;

/** The leaf partitions of the log, where its rows are. */
const leavesOf = async (db: pg.Client) =>
  (
    await db.query<{ leaf: string; name: string }>(
      `SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS leaf, c.relname AS name
         FROM pg_catalog.pg_partition_tree('emt_messages'::regclass) t
         JOIN pg_catalog.pg_class c ON c.oid = t.relid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE t.isleaf ORDER BY c.relname`,
    )
  ).rows;

/** The leaves with planner statistics for the column the tail's index leads with. */
const leavesWithStatistics = async (db: pg.Client) =>
  (
    await db.query<{ name: string }>(
      `SELECT s.tablename AS name FROM pg_catalog.pg_stats s
        WHERE s.tablename LIKE 'emt\\_messages\\_%' AND s.attname = 'transaction_id' ORDER BY s.tablename`,
    )
  ).rows.map((r) => r.name);

describe('a PostgreSQL log never analyzed', () => {
  it('is analyzed as it opens, and a page is then read by the tail index without sorting the rest of the log', () =>
    withLogDatabase(async ({ db, open }) => {
      // Given a log written in bulk (100 events a stream) on a server whose autovacuum does not
      // analyze it meanwhile.
      const written = await open();
      for (const { leaf } of await leavesOf(db))
        await db.query(`ALTER TABLE ${leaf} SET (autovacuum_enabled = false)`);
      await appendProjects(written, EVENTS / 100, 100);
      expect(await leavesWithStatistics(db)).toEqual([]);

      // When it opens again.
      const log = await open();

      // Then the leaf holding the events has statistics, and the second page of the log is read by
      // the tail's index, with no Sort anywhere in its plan.
      expect(await leavesWithStatistics(db)).toEqual(['emt_messages_emt_default_active']);
      const first = await log.readAll({ position: 0n, transactionId: null }, PAGE);
      expect(first.events).toHaveLength(PAGE);
      const nodes = await planNodes(db, pageAfter(first.cursor, PAGE));
      expect(nodes.filter((n) => n['Node Type'] === 'Sort')).toEqual([]);
      expect(nodes.filter((n) => n['Node Type'] === 'Index Scan').map((n) => n['Index Name'])).toEqual([
        expect.stringMatching(/^emt_messages_emt_default_acti_transaction_id_global_positio/),
      ]);
      expect((await log.readAll(first.cursor, PAGE)).events).toHaveLength(PAGE);
    }));
});
