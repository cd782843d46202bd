import pg from 'pg';
import type { MindledgerEvent } from '../../events';
import { openPostgresLog } from '../../src/eventlog/postgres';
import type { EventLog } from '../../src/eventlog/types';
import { projectStream } from '../../src/shared/projectState';
import { freshPostgresDatabase } from './postgres';

/** A node of PostgreSQL's plan as `EXPLAIN (FORMAT JSON)` gives it. */
export type PlanNode = {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
};

/** Every node of the plan PostgreSQL makes for `query` (the log's own statement builders' shape). */
export const planNodes = async (db: pg.Client, query: { text: string; values: unknown[] }) => {
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${query.text}`,
    query.values,
  );
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
  return nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
};

/** `streams` × `perStream` project events appended to `log`, a stream's in one append (a bulk load). */
export const appendProjects = async (log: EventLog, streams: number, perStream: number) => {
  const createdAt = new Date().toISOString();
  for (let s = 0; s < streams; s++) {
    const events: MindledgerEvent[] = Array.from({ length: perStream }, (_, k) => ({
      type: 'ProjectCreated',
      data: { name: `p${s}-${k}`, createdAt },
    }));
    await log.append(projectStream(`p${s}`), events, 0n);
  }
};

/**
 * A fresh PostgreSQL database for a log, with a client of its own to look into it. `open` opens the
 * log on it (closing the one opened before: a reopen); the last one opened is closed, and the
 * database given back, however `work` ends.
 */
export const withLogDatabase = async (
  work: (world: { db: pg.Client; open: () => Promise<EventLog> }) => Promise<void>,
) => {
  const database = await freshPostgresDatabase();
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  let log: EventLog | undefined;
  const open = async () => {
    const before = log;
    log = undefined;
    await before?.close();
    log = await openPostgresLog(database.url, () => new Date());
    return log;
  };
  try {
    await work({ db, open });
  } finally {
    await log?.close();
    await db.end();
    await database.drop();
  }
};
