import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { CHECKPOINT_TABLE } from '../../src/projection/checkpoint';
import { startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';
import { runCli } from '../support/bundled';

type CheckReport = {
  position: string;
  rebuiltPosition: string;
  differences: { table: string; onlyLive: string[]; onlyRebuilt: string[] }[];
};

/** `npm run replay [-- <flag>]`, as an operator runs it (compiled from source: test/support/bundled.ts). */
const replayCli = (t: TestApp, flag?: '--check' | '--resume') =>
  runCli('src/cli/replay.ts', flag ? [flag] : [], {
    LOG_LEVEL: 'silent',
    DATA_DIR: t.config.dataDir,
    ...(t.config.eventStoreUrl ? { EVENT_STORE_URL: t.config.eventStoreUrl } : {}),
  });

const replayCheck = async (t: TestApp) => {
  const { code, stdout, stderr } = await replayCli(t, '--check');
  return { code, report: JSON.parse(stdout) as CheckReport, stderr };
};

/**
 * An app that wrote project `audit`'s skills (a, b renamed to b_renamed, c deleted), then stopped as
 * an operator stops it before a check. Each test gets its own: one of them damages the read model.
 */
const givenStoppedAppWithSkills = async (kind: StoreKind) => {
  const t = await startTestApp(kind);
  await t.http.post('/api/projects').send({ name: 'audit' }).expect(201);
  for (const name of ['a', 'b', 'c'])
    await t.http
      .post('/api/projects/audit/skills')
      .send({
        skill: { name, type: 'text2sql', params: { database: 'files', description: `skill ${name}` } },
      })
      .expect(201);
  await t.http
    .put('/api/projects/audit/skills/b')
    .send({ skill: { name: 'b_renamed' } })
    .expect(200);
  await t.http.delete('/api/projects/audit/skills/c').expect(204);
  // Writes answer ahead of the read model, and a stop does not wait for it: a read of the skills
  // waits until this app's writes are applied, so the stopped read model holds them (on a busy
  // machine it once stopped before skill a's row was written, and losing it deleted nothing).
  const listed = await t.http.get('/api/projects/audit/skills').expect(200);
  expect((listed.body as { name: string }[]).map((s) => s.name).sort()).toEqual(['a', 'b_renamed']);
  await t.stop();
  return t;
};

/** A row of skill `name` deleted from the stopped app's read model, behind the log's back. */
const loseSkillRow = async (t: TestApp, name: string) => {
  const instance = await DuckDBInstance.create(t.config.duckdbFile);
  const c = await instance.connect();
  expect((await c.run('DELETE FROM skills WHERE NAME = ?', [name])).rowsChanged).toBe(1);
  c.closeSync();
  instance.closeSync();
};

describe.each(storeKinds)('npm run replay, and with --check (%s)', (kind) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('given a live read model in step with the log, when checked, then no table differs', async () => {
    t = await givenStoppedAppWithSkills(kind);

    const { code, report, stderr } = await replayCheck(t);

    expect(report.differences).toEqual([]);
    expect(report.position).toBe(report.rebuiltPosition);
    expect(code).toBe(0);
    expect(stderr).toMatch(/equals a rebuild from the log/);
  }, 60_000);

  it('given a row lost from the live read model, when checked, then that table and row are reported', async () => {
    t = await givenStoppedAppWithSkills(kind);
    await loseSkillRow(t, 'a');

    const { code, report } = await replayCheck(t);

    expect(code).toBe(1);
    expect(report.differences.map((d) => d.table)).toEqual(['skills']);
    expect(report.differences[0]!.onlyLive).toEqual([]);
    expect(report.differences[0]!.onlyRebuilt).toHaveLength(1);
    expect(JSON.parse(report.differences[0]!.onlyRebuilt[0]!)).toMatchObject({ NAME: 'a', PROJECT: 'audit' });
  }, 60_000);

  it('given a read model with a row lost, when replayed, then the whole log is applied from its start and the tables equal a rebuild', async () => {
    t = await givenStoppedAppWithSkills(kind);
    await loseSkillRow(t, 'a');
    t = await t.restart();
    const head = await t.running.ctx.log.head();
    await t.stop();

    const { code, stderr } = await replayCli(t);

    expect(code).toBe(0);
    const lines = [...stderr.matchAll(/replay: (\d+)% \((\d+)\/(\d+) events/g)].map((m) =>
      m.slice(1).map(Number),
    );
    expect(lines.at(-1)).toEqual([100, head.events, head.events]);
    expect(stderr).toMatch(/time per table:\n {2}\S+/);
    const check = await replayCheck(t);
    expect(check.report.differences).toEqual([]);
    expect(check.code).toBe(0);
  }, 90_000);
});

/** The log position a read model's file says its tables include. */
const checkpointOf = async (file: string) => {
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  const reader = await c.runAndReadAll(`SELECT position FROM ${CHECKPOINT_TABLE}`);
  c.closeSync();
  instance.closeSync();
  return BigInt(String(reader.getRows()[0]![0]));
};

describe.each(storeKinds)('npm run replay -- --resume (%s)', (kind) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('given tables that stopped partway through the log, when resumed, then only the rest is applied and the tables equal a rebuild', async () => {
    // Tables committed up to a point (as an interrupted replay leaves them: every batch commits
    // with its checkpoint): the read model's file as it was before more was written.
    t = await givenStoppedAppWithSkills(kind);
    const partway = `${t.config.duckdbFile}.partway`;
    fs.copyFileSync(t.config.duckdbFile, partway);
    const partwayAt = await checkpointOf(partway);
    t = await t.restart();
    for (const name of ['d', 'e'])
      await t.http
        .post('/api/projects/audit/skills')
        .send({ skill: { name, type: 'text2sql', params: { database: 'files' } } })
        .expect(201);
    const head = await t.running.ctx.log.head();
    const rest = await t.running.ctx.log.readPage({ after: partwayAt, limit: 10_000 });
    expect(rest.map((e) => e.type)).toEqual(expect.arrayContaining(['SkillCreated', 'SkillCreated']));
    expect(rest.length).toBeLessThan(head.events);
    await t.stop();
    fs.rmSync(`${t.config.duckdbFile}.wal`, { force: true });
    fs.copyFileSync(partway, t.config.duckdbFile);

    const { code, stderr } = await replayCli(t, '--resume');

    expect(code).toBe(0);
    // Progress names what was left, not the whole log: nothing before the checkpoint again.
    const last = [...stderr.matchAll(/resume: (\d+)% \((\d+)\/(\d+) events, \d+ events\/s/g)].at(-1);
    expect(last?.slice(1).map(Number)).toEqual([100, rest.length, Number(head.position - partwayAt)]);
    const check = await replayCheck(t);
    expect(check.report.differences).toEqual([]);
    expect(check.code).toBe(0);
  }, 90_000);
});
