/**
 * The auditor reads the log and nothing else (src/sql/pipeline/scope.ts): LLM_FILTER, LLM_REDUCE
 * and LLM_RERANK spend the server's provider key as LLM() does, and are refused to it on every door
 * that runs SQL (HTTP, MySQL, PostgreSQL, MCP `query`), before any provider call; an analyst's
 * reach the provider.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import type { MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import type { TestApp } from '../support/app';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
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
import { ruled } from './llm-aggregates-support';

const STATEMENTS = [
  `SELECT 1 AS n FROM information_schema.EVENTS WHERE LLM_FILTER('Is it new?', stream_id) LIMIT 1`,
  `SELECT LLM_REDUCE('Summarize', stream_id) AS s FROM information_schema.EVENTS`,
  `SELECT stream_id FROM information_schema.EVENTS ORDER BY LLM_RERANK('newest', stream_id) LIMIT 3`,
];

describe('the LLM functions and the auditor, on every door', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  let listening: Listening;
  let auditorCookie: string;
  let analystCookie: string;
  let my: mysql.Connection;
  let pgc: pg.Client;
  let mcp: Client;
  const pgOpened: pg.Client[] = [];

  /** The auditor's refusal of `sql` over each door: the error code (as the door words it) and message. */
  const refusals = async (sql: string) => ({
    http: await sqlOver(t, auditorCookie, sql).then((a) => [a.error_code, a.error_message]),
    mysql: await my.query(sql).then(
      () => ['answered'],
      (e: { errno?: number; message: string }) => [e.errno, e.message],
    ),
    postgres: await pgc.query(sql).then(
      () => ['answered'],
      (e: { code?: string; message: string }) => [e.code, e.message],
    ),
    mcp: await call(mcp, 'query', { query: sql }).then((r) => [
      r.structuredContent?.error_code,
      r.structuredContent?.error_message,
    ]),
  });

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    ruled(fake);
    t = await startAuthApp('sqlite', {
      OPENAI_API_KEY: 'sk-server-key-61',
      OPENAI_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
    });
    const admin = await login(t, ADMIN.name, ADMIN.password);
    const auditor = await userWithRole(t, admin, 'aggregates_auditor', 'auditor');
    auditorCookie = auditor.cookie;
    analystCookie = (await userWithRole(t, admin, 'aggregates_analyst', 'analyst')).cookie;
    mysqlServer = await startMysqlDoor(t);
    pgServer = await startPgDoor(t, { authOn: true, server: { host: '127.0.0.1' } });
    listening = await listen(t);
    my = await mysqlAs(mysqlServer, auditor.name, auditor.password);
    pgc = await pgClient(pgServer.port, { user: auditor.name, password: auditor.password }, pgOpened);
    mcp = await mcpClient(listening.url, bearer(await projectToken(t, auditorCookie, null)));
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

  it.each(STATEMENTS)(
    'refuses the auditor %s on HTTP, MySQL, PostgreSQL and MCP, with no provider call',
    async (sql) => {
      const fn = /LLM_(FILTER|REDUCE|RERANK)/.exec(sql)![0].toLowerCase();
      const message = `The auditor role reads information_schema.EVENTS only: ${fn}() is not allowed`;
      expect(await refusals(sql)).toEqual({
        http: [1227, message],
        mysql: [1227, message],
        postgres: ['42501', message],
        mcp: [1227, message],
      });
      expect(fake.chatRequests()).toHaveLength(0);
    },
  );

  it('holds the analyst to none of this: its LLM_REDUCE reaches the provider, recorded under its name', async () => {
    const answer = await sqlOver(
      t,
      analystCookie,
      `SELECT LLM_REDUCE('Summarize', x) AS s FROM (VALUES ('b'), ('a')) v(x)`,
    );
    expect(answer).toMatchObject({ type: 'table', data: [['reduced: a|b']] });
    expect(fake.chatRequests()).toHaveLength(1);
    const admin = await login(t, ADMIN.name, ADMIN.password);
    const usage = await sqlOver(
      t,
      admin,
      `SELECT USER_NAME, ROLE, CALLS FROM information_schema.LLM_USAGE WHERE USER_NAME = 'aggregates_analyst'`,
    );
    expect(usage).toMatchObject({ data: [['aggregates_analyst', 'analyst', 1]] });
  });
});
