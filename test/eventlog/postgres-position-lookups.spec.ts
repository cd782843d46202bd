/**
 * The PostgreSQL log's look-ups by position alone — `eventIdAt` (every readiness probe and every
 * start: does the log still hold the read model's last event?), `eventAt` (a receipt's event) and `readPage` (audits' pages, one
 * event at a position) — go by an index on the position (`mindledger_messages_position`, added by
 * src/eventlog/postgresSchema.ts), not by reading the tail's index or the table after the position:
 * on a large log either was a read of most of the log on every probe and every page.
 */
import type pg from 'pg';
import { eventAtQuery, pageAfterPosition } from '../../src/eventlog/postgres';
import { logStart } from '../../src/eventlog/types';
import { appendProjects, planNodes, withLogDatabase } from '../support/postgresLogPlans';

const STREAMS = 30;
const PER_STREAM = 100;
const PAGE = 250;

/** The scans of the log's tables in the plan of `query`, as "node type on relation (index)". */
const scansOfMessages = async (db: pg.Client, query: { text: string; values: unknown[] }) =>
  (await planNodes(db, query))
    .filter((n) => n['Relation Name']?.startsWith('emt_messages'))
    .map((n) => `${n['Node Type']} on ${n['Relation Name']} (${n['Index Name'] ?? ''})`);

/** The leaf indexes of the index mindledger adds on the position (one per leaf partition). */
const positionIndexLeaves = async (db: pg.Client) =>
  (
    await db.query<{ name: string }>(
      `SELECT c.relname AS name
         FROM pg_catalog.pg_partition_tree(to_regclass('mindledger_messages_position')) t
         JOIN pg_catalog.pg_class c ON c.oid = t.relid
        WHERE t.isleaf`,
    )
  ).rows.map((r) => r.name);

describe('a PostgreSQL log looked up by position', () => {
  it('finds the event at a position, and a page after a position, by the index on the position', () =>
    withLogDatabase(async ({ db, open }) => {
      // Given a log of a few thousand events, analyzed.
      const log = await open();
      await appendProjects(log, STREAMS, PER_STREAM);
      await db.query('ANALYZE emt_messages');
      const all = (await log.readAll(logStart, STREAMS * PER_STREAM)).events;
      expect(all).toHaveLength(STREAMS * PER_STREAM);
      const middle = all[all.length / 2]!;
      const leaves = await positionIndexLeaves(db);
      const byPositionIndex = (scan: string) => leaves.some((leaf) => scan.endsWith(`(${leaf})`));

      // Then the event at a position is found by the position's index, and it is that event.
      const idScans = await scansOfMessages(db, eventAtQuery(middle.meta.position, 'm.message_id'));
      expect(idScans).toHaveLength(1);
      expect(idScans.filter(byPositionIndex)).toEqual(idScans);
      expect(idScans[0]).toMatch(/^Index (Only )?Scan /);
      expect(await log.eventIdAt(middle.meta.position)).toBe(middle.meta.eventId);
      const eventScans = await scansOfMessages(db, eventAtQuery(middle.meta.position));
      expect(eventScans).toHaveLength(1);
      expect(eventScans.filter(byPositionIndex)).toEqual(eventScans);
      expect((await log.eventAt(middle.meta.position))?.meta.eventId).toBe(middle.meta.eventId);

      // And a page after that position is read by the position's index, in the position's order.
      const page = { after: middle.meta.position, limit: PAGE };
      const pageScans = await scansOfMessages(db, pageAfterPosition(page));
      expect(pageScans).toHaveLength(1);
      expect(pageScans.filter(byPositionIndex)).toEqual(pageScans);
      expect(pageScans[0]).toMatch(/^Index Scan /);
      const byPosition = [...all].sort((a, b) => Number(a.meta.position - b.meta.position));
      const expected = byPosition.filter((e) => e.meta.position > middle.meta.position).slice(0, PAGE);
      expect((await log.readPage(page)).map((e) => e.meta.eventId)).toEqual(
        expected.map((e) => e.meta.eventId),
      );
    }));
});
