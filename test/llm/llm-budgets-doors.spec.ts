/**
 * LLM budgets, role × door: a query whose planned calls would pass the caller's budget is refused
 * before any provider request on every door that runs SQL (HTTP, MySQL, PostgreSQL, MCP `query`, a
 * job's statement, whose run fails naming the limit), each refusal in the log; and only an admin
 * sets a budget, on any door. On both stores (agent runs: llm-budgets-agents.spec.ts).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import type { MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import { mysqlAs, projectToken, startMysqlDoor, userWithRole } from '../auth/support';
import { NO_POLL } from '../jobs/support';
import { bearer, call, listen, mcpClient, type Listening } from '../mcp/support';
import { pgClient, startPgDoor } from '../pgwire/support';
import { storeKinds } from '../support/app';
import { plannedCalls, refusalsOf, sqlAs, startBudgetWorld, type BudgetWorld } from './llm-budgets-support';

type Who = { name: string; password: string; cookie: string };

describe.each(storeKinds)('LLM budgets on every door (%s)', (store) => {
  let w: BudgetWorld;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  let listening: Listening;
  const pgOpened: pg.Client[] = [];
  const myOpened: mysql.Connection[] = [];
  const mcpOpened: Client[] = [];

  beforeAll(async () => {
    w = await startBudgetWorld(store, NO_POLL);
    mysqlServer = await startMysqlDoor(w.t);
    pgServer = await startPgDoor(w.t, { authOn: true, server: { host: '127.0.0.1' } });
    listening = await listen(w.t);
  });
  afterAll(async () => {
    myOpened.forEach((c) => c.destroy());
    await Promise.all(pgOpened.map((c) => c.end().catch(() => undefined)));
    await Promise.all(mcpOpened.map((c) => c.close().catch(() => undefined)));
    await listening?.close();
    await mysqlServer?.close(0);
    await pgServer?.close(0);
    await w?.t.dispose();
    await w?.fake.close();
  });

  /** `sql` as `who` over each door: the answer's error code and message, or `answered` and the rows' count. */
  const overEachDoor = async (who: Who, sql: string) => {
    const my = await mysqlAs(mysqlServer, who.name, who.password);
    myOpened.push(my);
    const pgc = await pgClient(pgServer.port, { user: who.name, password: who.password }, pgOpened);
    const mcp = await mcpClient(listening.url, bearer(await projectToken(w.t, who.cookie, null)));
    mcpOpened.push(mcp);
    return {
      http: await sqlAs(w.t, { cookie: who.cookie }, sql).then((a) =>
        a.type === 'error' ? [a.error_code, a.error_message] : ['answered', a.data?.length],
      ),
      mysql: await my.query(sql).then(
        ([rows]) => ['answered', Array.isArray(rows) ? rows.length : 0],
        (e: { errno?: number; message: string }) => [e.errno, e.message],
      ),
      postgres: await pgc.query(sql).then(
        (r) => ['answered', r.rowCount],
        (e: { code?: string; message: string }) => [e.code, e.message],
      ),
      mcp: await call(mcp, 'query', { query: sql }).then((r) =>
        r.structuredContent?.type === 'error'
          ? [r.structuredContent.error_code, r.structuredContent.error_message]
          : ['answered', r.structuredContent?.data?.length],
      ),
    };
  };

  it("refuses a query past a user's daily calls on HTTP, MySQL, PostgreSQL and MCP before any provider request, each refusal logged", async () => {
    const analyst = await userWithRole(w.t, w.admin, 'door_analyst', 'analyst');
    await sqlAs(w.t, { cookie: w.admin }, 'CREATE LLM_BUDGET FOR USER door_analyst USING calls_per_day = 2');
    const before = w.fake.chatRequests().length;
    const message =
      'LLM() would make 3 calls: the LLM budget of user door_analyst allows calls_per_day = 2 (spent today: 0); refused before any call';
    expect(await overEachDoor(analyst, plannedCalls(3, 'doors-a'))).toEqual({
      http: [1227, message],
      mysql: [1227, message],
      postgres: ['42501', message],
      mcp: [1227, message],
    });
    expect(w.fake.chatRequests()).toHaveLength(before);
    expect((await refusalsOf(w, 'door_analyst')).map((r) => [r.via, r.limit, r.planned])).toEqual([
      ['sql', 'calls_per_day', 3],
      ['mysql', 'calls_per_day', 3],
      ['postgres', 'calls_per_day', 3],
      // MCP's `query` runs through the SQL endpoint, with the caller's token.
      ['sql', 'calls_per_day', 3],
    ]);
    expect((await refusalsOf(w, 'door_analyst')).at(-1)?.caller.actor).toMatch(/^token:/);
  });

  it("fails a job's run whose statement would pass its owner's budget, naming the limit, with no provider request", async () => {
    const editor = await userWithRole(w.t, w.admin, 'door_editor', 'editor');
    await sqlAs(w.t, { cookie: w.admin }, 'CREATE PROJECT p_door_job');
    await sqlAs(w.t, { cookie: w.admin }, 'CREATE LLM_BUDGET FOR USER door_editor USING calls_per_day = 1');
    const before = w.fake.chatRequests().length;
    expect(
      await sqlAs(
        w.t,
        { cookie: editor.cookie },
        `CREATE JOB p_door_job.j (${plannedCalls(2, 'doors-job')}) EVERY hour`,
      ),
    ).toMatchObject({ type: 'ok' });
    await w.t.running.jobs.tick();
    const runs = (
      await w.t.http.get('/api/projects/p_door_job/jobs/j/history').set('Cookie', w.admin).expect(200)
    ).body as { status: string; error: string | null }[];
    expect(runs).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: expect.stringContaining(
          'the LLM budget of user door_editor allows calls_per_day = 1 (spent today: 0); refused before any call',
        ),
      }),
    ]);
    expect(w.fake.chatRequests()).toHaveLength(before);
    expect((await refusalsOf(w, 'door_editor')).map((r) => [r.via, r.limit])).toEqual([
      ['job', 'calls_per_day'],
    ]);
  });

  it('runs a 10,000-row job within its per-query budget, past the server cap, counting every request', async () => {
    const editor = await userWithRole(w.t, w.admin, 'door_bulk', 'editor');
    await sqlAs(w.t, { cookie: w.admin }, 'CREATE PROJECT p_door_bulk');
    await sqlAs(
      w.t,
      { cookie: w.admin },
      'CREATE LLM_BUDGET FOR USER door_bulk USING calls_per_query = 700, calls_per_day = 700',
    );
    const before = w.fake.chatRequests().length;
    const bulk = `SELECT LLM('Say ok to row ' || i) AS a FROM range(10000) r(i)`;
    expect(
      await sqlAs(w.t, { cookie: editor.cookie }, `CREATE JOB p_door_bulk.j (${bulk}) EVERY hour`),
    ).toMatchObject({ type: 'ok' });
    await w.t.running.jobs.tick();
    const runs = (
      await w.t.http.get('/api/projects/p_door_bulk/jobs/j/history').set('Cookie', w.admin).expect(200)
    ).body as { status: string; error: string | null }[];
    expect(runs).toEqual([expect.objectContaining({ status: 'finished', error: null })]);
    // 10,000 distinct prompts in batches of at most 16 rows: 625 requests at least, within 700.
    const made = w.fake.chatRequests().length - before;
    expect(made).toBeGreaterThanOrEqual(625);
    expect(made).toBeLessThanOrEqual(700);
    const usage = await sqlAs(
      w.t,
      { cookie: w.admin },
      `SELECT CALLS_TODAY FROM information_schema.LLM_BUDGETS WHERE SCOPE = 'user' AND SUBJECT = 'door_bulk'`,
    );
    expect(usage.data).toEqual([[made]]);
    expect(await refusalsOf(w, 'door_bulk')).toEqual([]);
  });

  it('lets only an admin set or drop a budget, on every door and over REST', async () => {
    for (const role of ['editor', 'analyst'] as const) {
      const who = await userWithRole(w.t, w.admin, `door_setter_${role}`, role);
      const create = `CREATE LLM_BUDGET FOR USER door_setter_${role} USING calls_per_day = 1000`;
      const message = `LLM budgets are set by the admin role (yours: ${role})`;
      expect(await overEachDoor(who, create)).toEqual({
        http: [1227, message],
        mysql: [1227, message],
        postgres: ['42501', message],
        mcp: [1227, message],
      });
      const put = await w.t.http
        .put(`/api/llm/budgets/user/door_setter_${role}`)
        .set('Cookie', who.cookie)
        .send({ calls_per_day: 1000 })
        .expect(403);
      expect(put.body).toMatchObject({ status: 403 });
      expect((await w.t.http.get('/api/llm/budgets').set('Cookie', who.cookie).expect(200)).body).not.toEqual(
        expect.arrayContaining([expect.objectContaining({ subject: `door_setter_${role}` })]),
      );
    }
    // A budget of this test's own (the cases run in any order: none may lean on another's).
    expect(
      await sqlAs(
        w.t,
        { cookie: w.admin },
        'CREATE LLM_BUDGET FOR USER door_setter_kept USING calls_per_day = 5',
      ),
    ).toMatchObject({ type: 'ok' });
    const auditor = await userWithRole(w.t, w.admin, 'door_setter_auditor', 'auditor');
    expect(
      await sqlAs(w.t, { cookie: auditor.cookie }, 'DROP LLM_BUDGET FOR USER door_setter_kept'),
    ).toMatchObject({
      error_code: 1227,
    });
    await w.t.http.delete('/api/llm/budgets/user/door_setter_kept').set('Cookie', auditor.cookie).expect(403);
    // The admin's budget is still there.
    expect(
      (await w.t.http.get('/api/llm/budgets').set('Cookie', w.admin).expect(200)).body as {
        subject: string;
      }[],
    ).toEqual(expect.arrayContaining([expect.objectContaining({ subject: 'door_setter_kept' })]));
  });
});
