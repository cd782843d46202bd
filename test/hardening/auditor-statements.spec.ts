/**
 * Issue 57, defect 5: the auditor reads the log and nothing else, in every statement, with or
 * without a FROM clause. `SELECT LLM('x' || i::varchar) FROM range(100) t(i)` made 100 calls with
 * the server's OPENAI_API_KEY, and `range(100000) × range(10000)` ran, over every door: no table
 * reference was read, so the auditor's table policy was never asked. Now table functions, row
 * generators, recursive CTEs and LLM() are refused for the auditor before anything runs (src/sql/scope.ts).
 *
 * Against the old code (scope.ts's `auditor` false) the refusals below answer rows and the fake
 * provider records the LLM() calls.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import type { MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import type { TestApp } from '../support/app';
import { startFakeOpenAi, fakeReply, type FakeOpenAi } from '../support/fakeOpenAi';
import {
  ADMIN,
  login,
  mysqlAs,
  projectToken,
  sqlOver,
  startAuthApp,
  startMysqlDoor,
  userWithRole,
} from '../auth/support';
import { pgClient, startPgDoor } from '../pgwire/support';
import { bearer, call, listen, mcpClient, type Listening } from '../mcp/support';

type Door = 'http' | 'mysql' | 'postgres' | 'mcp';
type Answer = { rows?: unknown[][]; error?: string };

const refusal = (what: string) =>
  `The auditor role reads information_schema.EVENTS only: ${what} is not allowed`;

describe('issue 57: the auditor reads the log and nothing else, in every statement', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  let listening: Listening;
  let cookie: string;
  let analystCookie: string;
  let my: mysql.Connection;
  let pgc: pg.Client;
  let mcp: Client;
  const pgOpened: pg.Client[] = [];

  /** One statement as the auditor over `door`: its rows, or its refusal's message (error 1227). */
  const run = async (door: Door, sql: string): Promise<Answer> => {
    switch (door) {
      case 'http': {
        const answer = await sqlOver(t, cookie, sql);
        if (answer.type !== 'error') return { rows: answer.data };
        expect(answer.error_code).toBe(1227);
        return { error: answer.error_message };
      }
      case 'mysql':
        try {
          const [rows] = await my.query({ sql, rowsAsArray: true });
          return { rows: rows as unknown[][] };
        } catch (error) {
          expect(error).toMatchObject({ errno: 1227 });
          return { error: (error as Error).message };
        }
      case 'postgres':
        try {
          return { rows: (await pgc.query({ text: sql, rowMode: 'array' })).rows as unknown[][] };
        } catch (error) {
          expect(error).toMatchObject({ code: '42501' });
          return { error: (error as Error).message };
        }
      case 'mcp': {
        const s = (await call(mcp, 'query', { query: sql })).structuredContent;
        if (s?.type !== 'error') return { rows: s?.data };
        expect(s.error_code).toBe(1227);
        return { error: s.error_message };
      }
    }
  };

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    fake.setFallback(fakeReply.text('an answer'));
    t = await startAuthApp('sqlite', {
      OPENAI_API_KEY: 'sk-server-key-57',
      OPENAI_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
    });
    const admin = await login(t, ADMIN.name, ADMIN.password);
    const auditor = await userWithRole(t, admin, 'statements_auditor', 'auditor');
    cookie = auditor.cookie;
    analystCookie = (await userWithRole(t, admin, 'statements_analyst', 'analyst')).cookie;
    mysqlServer = await startMysqlDoor(t);
    pgServer = await startPgDoor(t, { authOn: true, server: { host: '127.0.0.1' } });
    listening = await listen(t);
    my = await mysqlAs(mysqlServer, auditor.name, auditor.password);
    pgc = await pgClient(pgServer.port, { user: auditor.name, password: auditor.password }, pgOpened);
    mcp = await mcpClient(listening.url, bearer(await projectToken(t, cookie, null)));
  });
  afterAll(async () => {
    my?.destroy();
    await Promise.all(pgOpened.map((c) => c.end().catch(() => undefined)));
    await mcp?.close().catch(() => undefined);
    await listening?.close();
    await mysqlServer?.close(0);
    await pgServer?.close(0);
    await t?.dispose();
    await fake?.close();
  });

  const REFUSED: { sql: string; error: string }[] = [
    {
      sql: "SELECT LLM('x' || i::varchar) FROM range(100) t(i)",
      error: refusal('llm()'),
    },
    { sql: "SELECT LLM('x') AS a", error: refusal('llm()') },
    { sql: "SELECT llm('x') AS a FROM information_schema.EVENTS LIMIT 1", error: refusal('llm()') },
    {
      sql: 'SELECT count(*) FROM range(100000) a, range(10000) b',
      error: refusal('table function range()'),
    },
    {
      sql: 'SELECT count(*) FROM generate_series(1, 10) g',
      error: refusal('table function generate_series()'),
    },
    { sql: 'SELECT (SELECT count(*) FROM range(1000000)) AS n', error: refusal('table function range()') },
    { sql: 'SELECT sum(x) FROM (SELECT unnest(range(1000)) AS x) s', error: refusal('unnest()') },
    {
      sql: 'WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 10) SELECT count(*) FROM r',
      error: refusal('a recursive CTE'),
    },
    // The LLM functions spend the server's key as LLM() does; TO_MARKDOWN reads files and fetches URLs.
    {
      sql: "SELECT 1 AS n FROM information_schema.EVENTS WHERE LLM_FILTER('Is it new?', stream_id) LIMIT 1",
      error: refusal('llm_filter()'),
    },
    {
      sql: "SELECT LLM_REDUCE('Summarize', stream_id) AS s FROM information_schema.EVENTS",
      error: refusal('llm_reduce()'),
    },
    {
      sql: "SELECT stream_id FROM information_schema.EVENTS ORDER BY LLM_RERANK('newest', stream_id) LIMIT 3",
      error: refusal('llm_rerank()'),
    },
    { sql: "SELECT TO_MARKDOWN('https://example.com/a.pdf') AS md", error: refusal('to_markdown()') },
  ];

  describe.each(['http', 'mysql', 'postgres', 'mcp'] as const)('over %s', (door) => {
    it('refuses the LLM functions, TO_MARKDOWN, table functions, row generators and recursive CTEs, with no provider call', async () => {
      fake.reset();
      fake.setFallback(fakeReply.text('an answer'));
      for (const { sql, error } of REFUSED)
        expect({ sql, ...(await run(door, sql)) }).toEqual({ sql, error });
      expect(fake.chatRequests()).toHaveLength(0);
    });

    it('still answers the log and a constant', async () => {
      expect(
        (await run(door, 'SELECT count(*) > 0 AS some FROM information_schema.EVENTS')).error,
      ).toBeUndefined();
      expect((await run(door, 'SELECT 1 + 1 AS two')).rows?.map((r) => r.map(Number))).toEqual([[2]]);
    });
  });

  it('holds the analyst to none of this: its LLM() reaches the provider (so the fake counts calls)', async () => {
    fake.reset();
    fake.setFallback(fakeReply.text('an answer'));
    const answer = await sqlOver(t, analystCookie, "SELECT LLM('x') AS a");
    expect(answer).toMatchObject({ type: 'table', data: [['an answer']] });
    expect(fake.chatRequests()).toHaveLength(1);
    const [request] = fake.requests().filter((r) => r.path === '/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-server-key-57');
  });
});
