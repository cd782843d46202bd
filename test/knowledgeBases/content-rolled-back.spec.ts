/**
 * The knowledge bases' content when the batch that wrote it is rolled back: the projection
 * remembers what its tables hold (src/knowledgeBases/contentTables.ts: which exist, each one's
 * fields), and a rolled-back batch takes the tables it made and the fields it widened with it. The
 * batch is written again, and the content is as if it had never failed. DuckDB runs for real; the
 * failure is DuckDB's report of a memory shortage, injected on the writer's connection at the
 * batch's COMMIT (as test/projection/writer-failures.spec.ts does), since a shortage cannot be
 * timed to one statement.
 */
import { rebuildDifferences } from '../support/promise-rebuild';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { injectOnWriter, loggedMessages } from '../support/writerFailures';

/**
 * Fails, once, the first batch text (the one ending in its COMMIT) run after the writer ran a text
 * for which `armed` is true: a shortage reported before it runs, so the batch is rolled back.
 */
const failCommitAfter = (t: TestApp, armed: (sql: string) => boolean) => {
  let state: 'waiting' | 'armed' | 'done' = 'waiting';
  const injection = injectOnWriter(t, (sql) => {
    if (state === 'waiting' && armed(sql)) state = 'armed';
    else if (state === 'armed' && sql.includes('COMMIT')) {
      state = 'done';
      return 'fail before';
    }
    return 'run';
  });
  return { failed: () => state === 'done', restore: injection.restore };
};

const expectRebuildEqualsLive = async (t: TestApp) => expect(await rebuildDifferences(t, 1000)).toEqual([]);

describe.each(storeKinds)("the knowledge bases' content when its batch is rolled back (%s)", (kind) => {
  let t: TestApp;
  let logged: string[];
  const base = '/api/projects/mindsdb/knowledge_bases';
  beforeEach(async () => {
    const log = loggedMessages();
    logged = log.messages;
    t = await startTestApp(kind, {}, { logStream: log.logStream });
  });
  afterEach(() => t.dispose());

  const givenKnowledgeBase = async (name: string) =>
    (
      await t.http
        .post(base)
        .send({ knowledge_base: { name, metadata_columns: ['score'] } })
        .expect(201)
    ).body as { id: number };

  const insert = (name: string, rows: Record<string, unknown>[]) =>
    t.http.put(`${base}/${name}`).send({ knowledge_base: { rows } }).expect(200);

  const fieldsOf = (id: number) =>
    t.running.ctx.duck.query(`SELECT FIELD, TYPE FROM mdb_kb."kb_${id}_fields" ORDER BY FIELD`);

  it("given the batch that made a knowledge base's tables is rolled back, when it is written again, then the tables are made again and hold its documents, and the read model equals a rebuild", async () => {
    const kb = await givenKnowledgeBase('made_twice');
    const injection = failCommitAfter(t, (sql) => sql.includes(`"kb_${kb.id}"`) && sql.startsWith('CREATE'));
    try {
      await insert('made_twice', [
        { id: 'a', content: 'apples are red', score: 1 },
        { id: 'b', content: 'bananas are yellow', score: 2 },
      ]);
    } finally {
      injection.restore();
    }
    expect(injection.failed()).toBe(true);
    const got = await t.http.get(`${base}/made_twice`).expect(200);
    expect(got.body).toMatchObject({ documents: 2, chunks: 2 });
    expect(await fieldsOf(kb.id)).toEqual([{ FIELD: 'score', TYPE: 'BIGINT' }]);
    // The next insert goes into the tables made again.
    await insert('made_twice', [{ id: 'c', content: 'cherries are dark', score: 3 }]);
    const found = await querySql(t, 'SELECT id, score FROM mindsdb.made_twice ORDER BY id');
    expect(found.data).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    expect(logged.filter((m) => m.startsWith('projection failed'))).toEqual([]);
    await expectRebuildEqualsLive(t);
  });

  it('given the batch that widened a field and replaced a document is rolled back, when it is written again, then the field is widened and the document replaced, and the read model equals a rebuild', async () => {
    const kb = await givenKnowledgeBase('widened_twice');
    await insert('widened_twice', [{ id: 'a', content: 'apples are red', score: 1 }]);
    expect(await fieldsOf(kb.id)).toEqual([{ FIELD: 'score', TYPE: 'BIGINT' }]);
    const injection = failCommitAfter(t, (sql) => sql.startsWith(`DELETE FROM mdb_kb."kb_${kb.id}_fields"`));
    try {
      await insert('widened_twice', [{ id: 'a', content: 'apricots are orange', score: 1.5 }]);
    } finally {
      injection.restore();
    }
    expect(injection.failed()).toBe(true);
    expect(await fieldsOf(kb.id)).toEqual([{ FIELD: 'score', TYPE: 'DOUBLE' }]);
    const found = await querySql(t, 'SELECT id, chunk_content FROM mindsdb.widened_twice');
    expect(found.data).toEqual([['a', 'apricots are orange']]);
    expect(logged.filter((m) => m.startsWith('projection failed'))).toEqual([]);
    await expectRebuildEqualsLive(t);
  });
});
