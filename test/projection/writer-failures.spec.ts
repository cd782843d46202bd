/**
 * The read model's writer when DuckDB fails a batch for reasons that are not the batch's: its
 * memory limit reached while SQL queries held the memory (src/projection/runner.ts `applyBatch`,
 * `rollBack`, `settle`). Reproduced with heavy aggregates against a 300 MiB limit: writes answered
 * 503 for a second at a time, a ROLLBACK that met the limit left the writer's transaction open
 * (every later batch failed), and a batch DuckDB reported failed after its COMMIT went through was
 * written again (a second row of a skill). Here DuckDB runs for real; the failure reports are
 * injected on the writer's connection, since a memory shortage cannot be timed to one statement.
 */
import { rebuildDifferences } from '../support/promise-rebuild';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { injectOnWriter, loggedMessages } from '../support/writerFailures';

/** Once for the first text naming `name` (a batch writing that skill), then as usual. */
const onceFor = (name: string, how: 'fail before' | 'fail after' | 'begin only, then fail') => {
  let done = false;
  return (sql: string) => {
    if (done || !sql.includes(`'${name}'`)) return 'run' as const;
    done = true;
    return how;
  };
};

const skillNames = async (t: TestApp) => {
  const res = await t.http.get('/api/projects/mindsdb/skills').expect(200);
  return (res.body as { name: string }[]).map((s) => s.name).sort();
};

const createSkill = (t: TestApp, name: string) =>
  t.http
    .post('/api/projects/mindsdb/skills')
    .send({ skill: { name, type: 'text2sql', params: { database: 'files' } } });

const expectRebuildEqualsLive = async (t: TestApp) => expect(await rebuildDifferences(t, 1000)).toEqual([]);

describe.each(storeKinds)("the read model's writer when DuckDB fails a batch (%s)", (kind) => {
  let t: TestApp;
  /** The app's log lines' messages. */
  let logged: string[];
  beforeEach(async () => {
    const log = loggedMessages();
    logged = log.messages;
    t = await startTestApp(kind, {}, { logStream: log.logStream });
  });
  afterEach(() => t.dispose());

  it('given DuckDB reports an error for a batch whose COMMIT went through, when the batch is tried again, then it is not written twice: one row per skill, and the read model equals a rebuild', async () => {
    const injection = injectOnWriter(t, onceFor('committed_anyway', 'fail after'));
    try {
      const created = await createSkill(t, 'committed_anyway');
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'committed_anyway' });
      await createSkill(t, 'written_after').expect(201);
    } finally {
      injection.restore();
    }
    expect(await skillNames(t)).toEqual(['committed_anyway', 'written_after']);
    const rows = await t.http
      .post('/api/sql/query')
      .send({ query: "SELECT count(*) AS n FROM mindsdb.skills WHERE name = 'committed_anyway'" })
      .expect(200);
    expect(rows.body).toMatchObject({ type: 'table', data: [[1]] });
    await expectRebuildEqualsLive(t);
  });

  it('given DuckDB fails a batch for want of memory, when it is tried again, then the write is answered 201 and read back, not 503', async () => {
    const injection = injectOnWriter(t, onceFor('short_of_memory', 'fail before'));
    try {
      const created = await createSkill(t, 'short_of_memory');
      expect(created.status).toBe(201);
      // The read waits for the write: answered only once the batch is in the tables.
      const read = await t.http.get('/api/projects/mindsdb/skills/short_of_memory').expect(200);
      expect(read.body).toMatchObject({ name: 'short_of_memory', type: 'text2sql' });
    } finally {
      injection.restore();
    }
    // The batch was tried twice: the injected failure, then the write; no failure was recorded
    // (one would have answered every write waiting meanwhile 503 until a retry a second later).
    expect(injection.texts.filter((sql) => sql.includes("'short_of_memory'")).length).toBe(2);
    expect(logged).toContain(
      "a batch met DuckDB's memory limit: stopping heavy SQL queries and trying it again",
    );
    expect(logged.filter((m) => m.startsWith('projection failed'))).toEqual([]);
    const status = await t.http.get('/api/status').expect(200);
    expect(JSON.stringify(status.body)).not.toContain('Out of Memory');
    await expectRebuildEqualsLive(t);
  });

  it("given a failed batch's ROLLBACK meets the memory limit too, when the writer goes on, then the ROLLBACK is tried again and the batch and later ones are written", async () => {
    let rollbacksRefused = 0;
    const batchFails = onceFor('rollback_refused', 'begin only, then fail');
    const injection = injectOnWriter(t, (sql) => {
      // The first ROLLBACK after the failed batch meets the limit as well.
      if (sql === 'ROLLBACK' && rollbacksRefused === 0) {
        rollbacksRefused++;
        return 'fail before';
      }
      return batchFails(sql);
    });
    try {
      await createSkill(t, 'rollback_refused').expect(201);
      await createSkill(t, 'after_the_rollback').expect(201);
      expect(await skillNames(t)).toEqual(['after_the_rollback', 'rollback_refused']);
    } finally {
      injection.restore();
    }
    expect(rollbacksRefused).toBe(1);
    // The refused ROLLBACK was tried again (an open, aborted transaction failed every later batch).
    expect(injection.texts.filter((sql) => sql === 'ROLLBACK').length).toBeGreaterThanOrEqual(2);
    await expectRebuildEqualsLive(t);
  });
});
