import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

type CheckReport = {
  position: string;
  rebuiltPosition: string;
  differences: { table: string; onlyLive: string[]; onlyRebuilt: string[] }[];
};

/** `npm run replay -- --check`, as an operator runs it (through tsx, so no build is needed). */
const replayCheck = async (t: TestApp) => {
  const env = {
    ...process.env,
    LOG_LEVEL: 'silent',
    DATA_DIR: t.config.dataDir,
    ...(t.config.eventStoreUrl ? { EVENT_STORE_URL: t.config.eventStoreUrl } : {}),
  };
  try {
    const { stdout, stderr } = await run(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      ['src/cli/replay.ts', '--check'],
      {
        cwd: ROOT,
        env,
      },
    );
    return { code: 0, report: JSON.parse(stdout) as CheckReport, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, report: JSON.parse(e.stdout) as CheckReport, stderr: e.stderr };
  }
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
  await t.stop();
  return t;
};

describe.each(storeKinds)('npm run replay -- --check (%s)', (kind) => {
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
    const instance = await DuckDBInstance.create(t.config.duckdbFile);
    const c = await instance.connect();
    await c.run("DELETE FROM skills WHERE NAME = 'a'");
    c.closeSync();
    instance.closeSync();

    const { code, report } = await replayCheck(t);

    expect(code).toBe(1);
    expect(report.differences.map((d) => d.table)).toEqual(['skills']);
    expect(report.differences[0]!.onlyLive).toEqual([]);
    expect(report.differences[0]!.onlyRebuilt).toHaveLength(1);
    expect(JSON.parse(report.differences[0]!.onlyRebuilt[0]!)).toMatchObject({ NAME: 'a', PROJECT: 'audit' });
  }, 60_000);
});
