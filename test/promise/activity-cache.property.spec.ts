/**
 * The answer cache across activity. Answers are kept per what they read (src/projection/
 * readVersions.ts): a row of an activity table (an MCP call's record, an agent run, an LLM call)
 * keeps the answers of queries that read none of them, and moves those that do. The promise is
 * still "cached equals uncached": after generated interleavings of MCP calls, resource writes
 * (answered ahead of the read model, so read-your-writes is exercised too) and reads, every answer
 * equals the same query read afresh (wrapped in a query no cache holds). Beside it, a kill check:
 * answers stamped without the activity tables they read are caught at the count `npm test` runs.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import http from 'node:http';
import fc from 'fast-check';
import { keptAlive, querySql, storeKinds, type TestApp } from '../support/app';
import { asMultiset } from '../support/promise-sql';
import { propertySettings, PROPERTY_TIMEOUT_MS } from '../support/promise-world';
import { call, receiptOf, startMcpWorld, type McpWorld } from '../mcp/support';
import { expectCaught } from '../support/seed';

/** A fresh seed each run, printed: PROMISE_SEED repeats a failure (PROMISE_RUNS, PROMISE_SCALE run more). */
const SETTINGS = propertySettings(6);

/** Reads of resource tables only, of activity tables, and of both (MySQL dialect, MindsDB names). */
const QUERIES = [
  'SELECT 1 AS one',
  "SELECT NAME FROM information_schema.SKILLS WHERE PROJECT = 'mindsdb' ORDER BY NAME",
  'SELECT name FROM mindsdb.skills ORDER BY name',
  'SELECT count(*) AS n FROM information_schema.MCP_CALLS',
  'SELECT TARGET, count(*) AS n FROM information_schema.MCP_CALLS GROUP BY TARGET ORDER BY TARGET',
  'SELECT count(*) AS n, max(GLOBAL_POSITION) AS last FROM information_schema.EVENTS',
  "SELECT TYPE, count(*) AS n FROM information_schema.EVENTS WHERE TYPE LIKE 'Skill%' GROUP BY TYPE ORDER BY TYPE",
  'SELECT (SELECT count(*) FROM information_schema.SKILLS) AS skills, (SELECT count(*) FROM information_schema.MCP_CALLS) AS calls',
  "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mindsdb' ORDER BY TABLE_NAME",
] as const;

type Step =
  | { kind: 'mcp'; query: number }
  | { kind: 'mcpList' }
  | { kind: 'skill' }
  | { kind: 'dropSkill' }
  | { kind: 'read'; query: number };

const queryIndex = fc.nat({ max: QUERIES.length - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('mcp' as const), query: queryIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('mcpList' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('skill' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dropSkill' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const), query: queryIndex }) },
);

const shapeOf = (answer: Awaited<ReturnType<typeof querySql>>) => ({
  type: answer.type,
  error_message: answer.error_message,
  // The wrapping query's labels are DuckDB's, not the written text's (src/sql/labels.ts).
  column_names: answer.column_names?.map((name) => name.toLowerCase()),
  rows: asMultiset(answer.data ?? []),
});

describe.each(storeKinds)('answers kept across activity equal answers read afresh (%s)', (kind) => {
  let world: McpWorld;
  let t: TestApp;
  let client: Client;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  beforeAll(async () => {
    world = await startMcpWorld(kind);
    client = world.client;
    // About a thousand SQL requests a store, each on the one connection.
    t = { ...world.t, http: keptAlive(world.t.http, agent) };
  });
  afterAll(async () => {
    agent.destroy();
    await world?.dispose();
  });

  /** The answer over HTTP (cached where it may be), and the same query read afresh. */
  let fresh = 0;
  const checkRead = async (q: string, transcript: string[]) => {
    const kept = shapeOf(await querySql(t, q));
    // Another text each time: neither answer cache key nor plan cache key holds it.
    fresh++;
    const afresh = shapeOf(await querySql(t, `SELECT * FROM (${q}) AS afresh_${fresh}`));
    if (JSON.stringify(kept) !== JSON.stringify(afresh))
      throw new Error(
        `${q} answered ${JSON.stringify(kept)}, read afresh ${JSON.stringify(afresh)}\n\nsteps so far:\n${transcript.join('\n')}`,
      );
    transcript.push(`  read ${q}`);
  };

  /** Skills a test's runs named (each test its own prefix) and have not dropped yet, oldest first. */
  type Skills = { prefix: string; named: number; live: string[] };

  /** The property's check: the steps in turn, then after each every query kept against read afresh. */
  const keptEqualsAfresh = async (steps: Step[], skills: Skills) => {
    const transcript: string[] = [];
    // Every query asked once first, so that each step finds answers in the cache to keep or drop.
    for (const q of QUERIES) await checkRead(q, transcript);
    for (const s of steps) {
      switch (s.kind) {
        case 'mcp': {
          const result = await call(client, 'query', { query: QUERIES[s.query] });
          expect(result.isError).toBeFalsy();
          transcript.push(`mcp query ${QUERIES[s.query]} -> ${receiptOf(result).position}`);
          break;
        }
        case 'mcpList':
          transcript.push(
            `mcp list_databases -> ${receiptOf(await call(client, 'list_databases')).position}`,
          );
          break;
        case 'skill': {
          const name = `${skills.prefix}_${++skills.named}`;
          const res = await t.http
            .post('/api/projects/mindsdb/skills')
            .send({ skill: { name, type: 'custom', params: { note: name } } });
          expect(res.status).toBe(201);
          skills.live.push(name);
          transcript.push(`create skill ${name}`);
          break;
        }
        case 'dropSkill': {
          const name = skills.live.shift();
          // None left to drop: nothing appended, nothing to check again (as after a read).
          if (!name) continue;
          expect((await t.http.delete(`/api/projects/mindsdb/skills/${name}`)).status).toBe(204);
          transcript.push(`drop skill ${name}`);
          break;
        }
        case 'read':
          // A read appends nothing: every query was checked at this state just before (after the
          // last step, or first of all), so the read's own check is what it adds.
          await checkRead(QUERIES[s.query]!, transcript);
          continue;
      }
      // After every other step, every query: the ones the step's events read move, the others stay.
      for (const q of QUERIES) await checkRead(q, transcript);
    }
  };

  it(
    'given generated MCP calls, skill writes and reads, then every answer equals the same query read afresh',
    async () => {
      const skills: Skills = { prefix: `s_${kind}`, named: 0, live: [] };
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 24 }), (steps) =>
          keptEqualsAfresh(steps, skills),
        ),
        SETTINGS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'kill check: answers stamped without the activity tables they read (kept across MCP calls) are caught',
    async () => {
      const skills: Skills = { prefix: `kill_${kind}`, named: 0, live: [] };
      const runner = t.running.ctx.projections;
      const readStamp = runner.readStamp.bind(runner);
      const readStampsNow = runner.readStampsNow.bind(runner);
      // The bug: an answer's stamp as if it had read the resource tables only.
      const stamp = jest.spyOn(runner, 'readStamp').mockImplementation(() => readStamp([]));
      const stampsNow = jest.spyOn(runner, 'readStampsNow').mockImplementation(() => {
        const then = readStampsNow();
        return () => then([]);
      });
      try {
        await expectCaught(
          fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 24 }), (steps) =>
            keptEqualsAfresh(steps, skills),
          ),
          SETTINGS,
        );
      } finally {
        stamp.mockRestore();
        stampsNow.mockRestore();
      }
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('given an answer cached and the read model held, when a skill is created, then the next read waits for it and shows it', async () => {
    const q = QUERIES[1]!;
    await querySql(t, q);
    const held = t.running.ctx.projections.hold();
    let released = false;
    try {
      const name = `held_${kind}`;
      // Answered ahead of the read model: the log has it, the tables do not yet.
      const res = await t.http
        .post('/api/projects/mindsdb/skills')
        .send({ skill: { name, type: 'custom', params: {} } });
      expect(res.status).toBe(201);
      const reading = querySql(t, q).then((answer) => ({ answer, released }));
      await new Promise((resolve) => setTimeout(resolve, 100));
      released = true;
      held.release();
      const { answer, released: afterRelease } = await reading;
      expect(afterRelease).toBe(true);
      expect(answer.data!.map((r) => r[0])).toContain(name);
    } finally {
      held.release();
    }
  });

  it('given answers cached, when an MCP call is recorded, then reads of other tables are answered from the cache and reads of the calls are not', async () => {
    const hits = async () => {
      const text = (await t.http.get('/api/metrics')).text;
      return Number(/^mindledger_sql_cache_hits_total\{cache="answer"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const skillsQuery = QUERIES[1];
    const callsQuery = 'SELECT count(*) AS n FROM information_schema.MCP_CALLS';
    await querySql(t, skillsQuery);
    const before = await querySql(t, callsQuery);
    await call(client, 'list_databases');
    const hitsBefore = await hits();
    // The skills' answer is kept (a hit), the calls' is read again and counts the new call.
    await querySql(t, skillsQuery);
    expect(await hits()).toBe(hitsBefore + 1);
    const after = await querySql(t, callsQuery);
    expect(await hits()).toBe(hitsBefore + 1);
    expect(Number(after.data![0]![0])).toBe(Number(before.data![0]![0]) + 1);
  });
});
