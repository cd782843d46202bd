/**
 * LLM models and LLM() over the wire doors (MySQL, PostgreSQL) as over HTTP. Roles hold on each: an
 * analyst signed in by password asks a model (the call is counted under the analyst's name) but
 * cannot define one, an auditor cannot ask. Generated hostile statements (full Unicode, NUL, huge,
 * deep; the drivers send a lone surrogate as U+FFFD, as UTF-8 must) are each answered with rows or
 * the door's own error, never an internal error or a lost connection; afterwards the service writes,
 * is ready at the log's head, and a rebuild equals live.
 * Beside the generated statements, a kill check: SQL errors all answered with the internal code
 * (1105, each refusal's own code lost) are caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { ADMIN, login, mysqlAs, sqlOver, startAuthApp, startMysqlDoor, userWithRole } from '../auth/support';
import { pgClient, startPgDoor } from '../pgwire/support';
import { storeKinds, type TestApp } from '../support/app';
import { startDoors, type Doors } from '../support/doors';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { clip, readyAtHead } from '../support/hostile';
import { rebuildDifferences } from '../support/promise-rebuild';
import {
  closeStandIns,
  givenQuestionModel,
  hostileLlmStatements,
  standIn,
  startHostileLlmWorld,
} from './world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = Number(process.env.HOSTILE_RUNS ?? 25);

type MysqlFailure = { errno?: number; fatal?: boolean; message?: string };
type PgFailure = { code?: string; message?: string };

describe('LLM models and roles over the wire doors', () => {
  let t: TestApp;
  let admin: string;
  const opened: pg.Client[] = [];
  const connections: mysql.Connection[] = [];
  afterAll(async () => {
    for (const c of connections) c.destroy();
    for (const c of opened) await c.end().catch(() => undefined);
    await t.dispose();
    await closeStandIns();
  });

  it('given an analyst and an auditor signed in by password, then over MySQL and PostgreSQL the analyst asks and is counted, cannot define a model, and the auditor cannot ask', async () => {
    t = await startAuthApp('sqlite');
    admin = await login(t, ADMIN.name, ADMIN.password);
    const fake = await standIn();
    await givenQuestionModel((query) => sqlOver(t, admin, query), {
      baseUrl: fake.baseUrl,
      engine: 'door_engine',
      model: 'door_model',
      key: 'sk-d',
    });
    const analyst = await userWithRole(t, admin, 'door_ann', 'analyst');
    const auditor = await userWithRole(t, admin, 'door_aud', 'auditor');
    const define = `CREATE MODEL mindsdb.door_other PREDICT answer USING engine = 'door_engine', prompt_template = '{{q}}'`;

    const mysqlServer = await startMysqlDoor(t);
    const pgServer = await startPgDoor(t, { authOn: true, server: { host: '127.0.0.1' } });
    try {
      const myAnalyst = await mysqlAs(mysqlServer, analyst.name, analyst.password);
      const myAuditor = await mysqlAs(mysqlServer, auditor.name, auditor.password);
      connections.push(myAnalyst, myAuditor);
      const [rows] = await myAnalyst.query(`SELECT answer FROM mindsdb.door_model WHERE q = 'over mysql'`);
      expect(rows).toEqual([{ answer: 'answer: Q: over mysql' }]);
      await expect(myAnalyst.query(define)).rejects.toMatchObject({ errno: 1227 });
      await expect(
        myAuditor.query(`SELECT answer FROM mindsdb.door_model WHERE q = 'auditor'`),
      ).rejects.toMatchObject({ errno: 1227 });

      const pgAnalyst = await pgClient(
        pgServer.port,
        { user: analyst.name, password: analyst.password },
        opened,
      );
      const pgAuditor = await pgClient(
        pgServer.port,
        { user: auditor.name, password: auditor.password },
        opened,
      );
      const answered = await pgAnalyst.query(`SELECT answer FROM mindsdb.door_model WHERE q = 'over pg'`);
      expect(answered.rows).toEqual([{ answer: 'answer: Q: over pg' }]);
      await expect(pgAnalyst.query(define)).rejects.toMatchObject({ code: '42501' });
      await expect(
        pgAuditor.query(`SELECT answer FROM mindsdb.door_model WHERE q = 'auditor'`),
      ).rejects.toMatchObject({ code: '42501' });
    } finally {
      await mysqlServer.close(0);
      await pgServer.close(0);
    }

    // Two calls, both the analyst's; nothing was defined; the auditor's asks reached no provider.
    const usage = await sqlOver(
      t,
      admin,
      `SELECT USER_NAME, ROLE, CALLS FROM information_schema.LLM_USAGE WHERE MODEL = 'door_model'`,
    );
    expect(usage).toMatchObject({ data: [['door_ann', 'analyst', 2]] });
    expect(fake.chatRequests()).toHaveLength(2);
    expect(await sqlOver(t, admin, 'SHOW MODELS FROM mindsdb')).not.toMatchObject({
      data: expect.arrayContaining([expect.arrayContaining(['door_other'])]),
    });
  }, 60_000);
});

describe.each(storeKinds)('generated values in LLM models and LLM() over the wire doors (%s)', (kind) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let doors: Doors;
  let engine: string;
  let model: string;
  beforeAll(async () => {
    ({ t, fake, engine, model } = await startHostileLlmWorld(kind));
    doors = await startDoors(t);
  }, 60_000);
  afterAll(async () => {
    await doors.close();
    await t.dispose();
    await fake.close();
  });

  /** One statement over MySQL, then over PostgreSQL: the promises it broke, and how many doors answered rows. */
  const overBothDoors = async (query: string) => {
    const violations: string[] = [];
    let answered = 0;
    await doors.my.query(query).then(
      () => answered++,
      (e: MysqlFailure) => {
        if (e.errno === 1105 || e.fatal || e.errno === undefined)
          violations.push(`MySQL ${clip(query)} → ${e.errno} ${clip(String(e.message))}`);
      },
    );
    await doors.pgc.query(query).then(
      () => answered++,
      (e: PgFailure) => {
        if (e.code === 'XX000' || e.code === undefined)
          violations.push(`PostgreSQL ${clip(query)} → ${e.code} ${clip(String(e.message))}`);
      },
    );
    await doors.my.query('DROP MODEL IF EXISTS mindsdb.hm');
    return { violations, answered };
  };

  it('answers every one over MySQL and PostgreSQL (rows or the door’s error), and the service goes on', async () => {
    const violations = new Set<string>();
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(hostileLlmStatements(model, engine), async (query) => {
        const sent = await overBothDoors(query);
        for (const v of sent.violations) violations.add(v);
        answered += sent.answered;
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    expect([...violations]).toEqual([]);
    expect(answered).toBeGreaterThan(0);

    // Both connections still answer, and the model still does.
    const [rows] = await doors.my.query(`SELECT answer FROM mindsdb.${model} WHERE q = 'after mysql'`);
    expect(rows).toEqual([{ answer: 'answer: Q: after mysql' }]);
    const after = await doors.pgc.query(`SELECT answer FROM mindsdb.${model} WHERE q = 'after pg'`);
    expect(after.rows).toEqual([{ answer: 'answer: Q: after pg' }]);
    const ready = await readyAtHead(t);
    expect(ready?.position).toBe(ready?.log_head);
    expect(await rebuildDifferences(t, 7)).toEqual([]);
  }, 600_000);

  it('kill check: SQL errors all answered with the internal code (1105) are caught', async () => {
    // The bug: the engine's error answers keep their message but every one carries 1105 (as an
    // error mapper that knows no kinds answers), so each door sends its internal error.
    const sql = t.running.sql;
    const internal = <A extends { type: string }>(answer: A): A =>
      answer.type === 'error' ? { ...answer, error_code: 1105 } : answer;
    const execute = sql.execute;
    const stream = sql.stream;
    const spies = [
      jest.spyOn(sql, 'execute').mockImplementation(async (...call) => internal(await execute(...call))),
      jest.spyOn(sql, 'stream').mockImplementation(async (...call) => internal(await stream(...call))),
    ];
    try {
      await expectCaught(
        fc.asyncProperty(
          hostileLlmStatements(model, engine),
          async (query) => (await overBothDoors(query)).violations.length === 0,
        ),
        { seed: SEED, numRuns: propertyRuns(RUNS) },
      );
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  }, 600_000);
});
