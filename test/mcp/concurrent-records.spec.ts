/**
 * MCP calls made at once over several sessions, as a busy assistant (or bench/mcp.bench.ts) makes
 * them: each call's record is appended once, in the log and in information_schema.MCP_CALLS, with
 * its own statement, caller and place in its session, whatever batches the log's group commit and
 * the read model made of them. On both stores.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpCallRecorded } from '../../events';
import { querySql, storeKinds } from '../support/app';
import { uniqueName } from '../support/world';
import { call, mcpClient, receiptOf, type McpWorld, type Receipt, startMcpWorld } from './support';

const SESSIONS = 4;
const CALLS_EACH = 6;

/** A call as its client saw it: the statement it sent and the receipt it got. */
type Made = { readonly sql: string; readonly receipt: Receipt };
/** A record as the log holds it. */
type Logged = { readonly position: number; readonly stream: string; readonly data: McpCallRecorded['data'] };
/** A row of information_schema.MCP_CALLS. */
type Row = {
  readonly SESSION_ID: string;
  readonly SEQ: number;
  readonly SQL: string;
  readonly ACTOR: string;
  readonly POSITION: number;
};

/**
 * What the calls, the log and MCP_CALLS disagree on (none: each call recorded exactly once, as
 * sent, numbered in its session 1, 2, … without a gap or a repeat).
 */
const disagreements = (made: readonly Made[], logged: readonly Logged[], rows: readonly Row[]) => {
  const found: string[] = [];
  const byPosition = <T>(items: readonly T[], at: (item: T) => number, what: string) => {
    const map = new Map<number, T>();
    for (const item of items) {
      if (map.has(at(item))) found.push(`${what}: position ${at(item)} twice`);
      map.set(at(item), item);
    }
    return map;
  };
  const events = byPosition(logged, (e) => e.position, 'log');
  const table = byPosition(rows, (r) => r.POSITION, 'MCP_CALLS');
  byPosition(made, (m) => m.receipt.position, 'receipts');
  if (logged.length !== made.length) found.push(`log: ${logged.length} records of ${made.length} calls`);
  if (rows.length !== made.length) found.push(`MCP_CALLS: ${rows.length} rows of ${made.length} calls`);
  for (const m of made) {
    const e = events.get(m.receipt.position);
    const r = table.get(m.receipt.position);
    if (!e) found.push(`log: no record at ${m.receipt.position}`);
    else if (e.data.sql !== m.sql || e.stream !== m.receipt.stream || e.data.seq !== m.receipt.seq)
      found.push(`log: the record at ${m.receipt.position} is not its call's`);
    if (!r) found.push(`MCP_CALLS: no row at ${m.receipt.position}`);
    else if (e && (r.SQL !== m.sql || r.SEQ !== e.data.seq || r.ACTOR !== e.data.caller.actor))
      found.push(`MCP_CALLS: the row at ${m.receipt.position} is not its record's`);
  }
  const seqs = new Map<string, number[]>();
  for (const e of logged) seqs.set(e.stream, [...(seqs.get(e.stream) ?? []), e.data.seq]);
  for (const [stream, numbers] of seqs)
    if (numbers.sort((a, b) => a - b).some((n, i) => n !== i + 1))
      found.push(`${stream}: calls numbered ${numbers.join(',')}`);
  return found;
};

describe.each(storeKinds)('MCP calls made at once, each recorded once (%s)', (store) => {
  let w: McpWorld;
  let others: Client[] = [];
  beforeAll(async () => {
    w = await startMcpWorld(store);
    others = await Promise.all(Array.from({ length: SESSIONS - 1 }, () => mcpClient(w.l.url)));
  });
  afterAll(async () => {
    for (const c of others) await c.close();
    await w?.dispose();
  });

  /** Every session calls `query` CALLS_EACH times, one call after another, all sessions at once. */
  const callAtOnce = async (marker: string) => {
    const clients = [w.client, ...others];
    const made = await Promise.all(
      clients.map(async (client, s) => {
        const mine: Made[] = [];
        for (let i = 0; i < CALLS_EACH; i++) {
          const sql = `SELECT '${marker}' AS m, ${s * 100 + i} AS n`;
          const result = await call(client, 'query', { query: sql });
          expect(result.isError).toBeFalsy();
          mine.push({ sql, receipt: receiptOf(result) });
        }
        return mine;
      }),
    );
    return made.flat();
  };

  /** The records of the sessions' streams, read from the log (PostgreSQL shows a commit a moment later). */
  const loggedFor = async (made: readonly Made[]) => {
    const streams = [...new Set(made.map((m) => m.receipt.stream))];
    const deadline = Date.now() + 10_000;
    for (;;) {
      const pages = await Promise.all(
        streams.map((stream) => w.t.running.ctx.log.readPage({ after: 0n, limit: 1000, stream })),
      );
      const logged = pages
        .flat()
        .filter((e) => e.type === 'McpCallRecorded')
        .map((e) => ({
          position: Number(e.meta.position),
          stream: e.meta.stream,
          data: e.data as McpCallRecorded['data'],
        }));
      if (logged.length >= made.length || Date.now() > deadline) return logged;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const rowsFor = async (marker: string) => {
    const answer = await querySql(
      w.t,
      `SELECT SESSION_ID, SEQ, SQL, ACTOR, POSITION FROM information_schema.MCP_CALLS WHERE SQL LIKE '%${marker}%'`,
    );
    return (answer.data ?? []).map(
      ([SESSION_ID, SEQ, SQL, ACTOR, POSITION]) =>
        ({ SESSION_ID, SEQ: Number(SEQ), SQL, ACTOR, POSITION: Number(POSITION) }) as Row,
    );
  };

  it(`given ${SESSIONS} sessions each calling ${CALLS_EACH} times at once, then the log and MCP_CALLS hold one record per call, as sent, numbered in its session`, async () => {
    const marker = uniqueName('at_once');
    const made = await callAtOnce(marker);
    expect(made).toHaveLength(SESSIONS * CALLS_EACH);
    const logged = await loggedFor(made);
    const rows = await rowsFor(marker);
    expect(disagreements(made, logged, rows)).toEqual([]);
    expect(new Set(rows.map((r) => r.SESSION_ID)).size).toBe(SESSIONS);

    // Kill checks: the comparison catches a batch that lost its last record, and one recorded twice.
    const last = made.at(-1)!.receipt.position;
    expect(
      disagreements(
        made,
        logged,
        rows.filter((r) => r.POSITION !== last),
      ),
    ).toContain(`MCP_CALLS: no row at ${last}`);
    expect(
      disagreements(
        made,
        logged.filter((e) => e.position !== last),
        rows,
      ),
    ).toContain(`log: no record at ${last}`);
    expect(disagreements(made, [...logged, logged[0]!], rows)).toContain(
      `log: position ${logged[0]!.position} twice`,
    );
  });
});
