/**
 * Knowledge bases through SQL, as MindsDB's docs and SDKs write it: CREATE KNOWLEDGE_BASE, INSERT
 * (VALUES, SELECT from a file), SELECT … WHERE content = '…' (hybrid search), metadata filters,
 * DELETE, DROP, information_schema and SHOW; every write checked in the log too.
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';
import { givenDatabase } from '../support/world';

let counter = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;

const ok = async (t: TestApp, query: string, context?: Record<string, unknown>) => {
  const answer = await querySql(t, query, context ? { context } : {});
  if (answer.type === 'error') throw new Error(`${query}: ${answer.error_message}`);
  return answer;
};

const rowsOf = (answer: Awaited<ReturnType<typeof querySql>>) => {
  if (answer.type !== 'table') throw new Error(`expected a table, got ${JSON.stringify(answer)}`);
  const names = answer.column_names ?? [];
  return (answer.data ?? []).map((r) => Object.fromEntries(names.map((c, i) => [c, r[i]])));
};

const DOCS = [
  [
    'd1',
    'The refund policy: customers may return any item within 30 days for a full refund.',
    'policy',
    2021,
  ],
  [
    'd2',
    'Shipping takes three to five business days inside the country; express shipping is next day.',
    'shipping',
    2022,
  ],
  ['d3', 'Our support team answers emails within one business day, seven days a week.', 'support', 2023],
  ['d4', 'Gift cards never expire and can be used for any purchase in the online store.', 'policy', 2023],
] as const;

/** A project with a knowledge base (built-in embeddings) holding DOCS, inserted with VALUES. */
const givenKnowledgeBase = async (t: TestApp, using = '') => {
  const project = unique('p');
  const kb = unique('kb');
  await ok(t, `CREATE PROJECT ${project}`);
  await ok(
    t,
    `CREATE KNOWLEDGE_BASE ${project}.${kb} USING metadata_columns = ['topic', 'year'], content_columns = ['content'], id_column = 'id'${using}`,
  );
  await ok(
    t,
    `INSERT INTO ${project}.${kb} (id, content, topic, year) VALUES ${DOCS.map(
      ([id, content, topic, year]) => `('${id}', '${content.replace(/'/g, "''")}', '${topic}', ${year})`,
    ).join(', ')}`,
  );
  return { project, kb };
};

describe.each(storeKinds)('knowledge bases in SQL on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('weighs vector against keyword by hybrid_search_alpha: 1 is cosine only, 0 keyword only, between a mix', async () => {
    const { project, kb } = await givenKnowledgeBase(t);
    const search = async (alpha: number) =>
      rowsOf(
        await ok(
          t,
          `SELECT id, distance, relevance FROM ${project}.${kb} WHERE content = 'refund within days' AND hybrid_search_alpha = ${alpha}`,
        ),
      ) as { id: string; distance: number; relevance: number }[];
    const [vector, keyword, mixed] = [await search(1), await search(0), await search(0.5)];
    expect(vector).toHaveLength(DOCS.length);
    // Vector only: relevance is the cosine similarity (1 − distance, never below 0), best first.
    for (const row of vector) expect(row.relevance).toBeCloseTo(Math.max(0, 1 - row.distance), 6);
    const relevances = vector.map((r) => r.relevance);
    expect(relevances).toEqual([...relevances].sort((a, b) => b - a));
    // Keyword only: the best keyword match scores 1, a chunk sharing no word scores 0.
    expect(keyword[0]).toMatchObject({ id: 'd1', relevance: 1 });
    expect(keyword.find((r) => r.id === 'd4')?.relevance).toBe(0);
    // Between: each chunk's relevance is the weighted sum of its two scores.
    const byId = (rows: typeof vector) => new Map(rows.map((r) => [r.id, r.relevance]));
    const [v, k] = [byId(vector), byId(keyword)];
    for (const row of mixed)
      expect(row.relevance).toBeCloseTo(0.5 * v.get(row.id)! + 0.5 * k.get(row.id)!, 6);
  });

  it('finds the passage that answers a question first, with MindsDB columns and a relevance', async () => {
    const { project, kb } = await givenKnowledgeBase(t);
    const answer = await ok(
      t,
      `SELECT * FROM ${project}.${kb} WHERE content = 'how many days to return an item for a refund?' LIMIT 2`,
    );
    if (answer.type !== 'table') throw new Error('not a table');
    expect(answer.column_names?.slice(0, 6)).toEqual([
      'id',
      'chunk_id',
      'chunk_content',
      'metadata',
      'distance',
      'relevance',
    ]);
    const rows = rowsOf(answer);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.id).toBe('d1');
    expect(rows[0]!.chunk_content).toBe(DOCS[0][1]);
    expect(String(rows[0]!.chunk_id)).toMatch(/^d1:1of1:0to\d+$/);
    expect(Number(rows[0]!.relevance)).toBeGreaterThan(Number(rows[1]!.relevance));
    expect(JSON.parse(String(rows[0]!.metadata))).toEqual({ topic: 'policy', year: 2021 });
  });

  it('filters on metadata columns and on relevance alongside the search', async () => {
    const { project, kb } = await givenKnowledgeBase(t);
    const rows = rowsOf(
      await ok(
        t,
        `SELECT id, topic FROM ${project}.${kb} WHERE content = 'store purchase policy' AND topic = 'policy' AND year >= 2023`,
      ),
    );
    expect(rows).toEqual([{ id: 'd4', topic: 'policy' }]);
    const strict = rowsOf(
      await ok(
        t,
        `SELECT id FROM ${project}.${kb} WHERE content = 'shipping express next day' AND relevance_threshold = 0.5`,
      ),
    );
    expect(strict.map((r) => r.id)).toEqual(['d2']);
  });

  it('lists every chunk without a question, and joins with other tables', async () => {
    const { project, kb } = await givenKnowledgeBase(t);
    const all = rowsOf(await ok(t, `SELECT id, distance FROM ${project}.${kb}`));
    expect(all.map((r) => r.id).sort()).toEqual(['d1', 'd2', 'd3', 'd4']);
    expect(all.every((r) => r.distance === null)).toBe(true);
    const file = unique('owners');
    await t.http
      .put(`/api/files/${file}`)
      .attach('file', Buffer.from('doc,owner\nd1,ann\nd2,bo\nd3,cy\nd4,di\n'), `${file}.csv`)
      .expect(200);
    const joined = rowsOf(
      await ok(
        t,
        `SELECT k.id, f.owner FROM ${project}.${kb} AS k JOIN files.${file} AS f ON f.doc = k.id WHERE k.content = 'support emails answered' LIMIT 1`,
      ),
    );
    expect(joined).toEqual([{ id: 'd3', owner: 'cy' }]);
  });

  it('re-inserting an id replaces its chunks; DELETE removes documents; both are in the log', async () => {
    const { project, kb } = await givenKnowledgeBase(t);
    await ok(
      t,
      `INSERT INTO ${project}.${kb} (id, content, topic, year) VALUES ('d1', 'Returns are no longer accepted after 14 days.', 'policy', 2024)`,
    );
    const d1 = rowsOf(await ok(t, `SELECT chunk_content, year FROM ${project}.${kb} WHERE id = 'd1'`));
    expect(d1).toEqual([{ chunk_content: 'Returns are no longer accepted after 14 days.', year: 2024 }]);
    const deleted = await ok(t, `DELETE FROM ${project}.${kb} WHERE id IN ('d2', 'd3')`);
    expect(deleted).toMatchObject({ type: 'ok', affected_rows: 2 });
    expect(rowsOf(await ok(t, `SELECT id FROM ${project}.${kb} ORDER BY id`)).map((r) => r.id)).toEqual([
      'd1',
      'd4',
    ]);
    const events = rowsOf(
      await ok(
        t,
        `SELECT TYPE, DATA FROM information_schema.EVENTS WHERE STREAM LIKE 'kb-%' AND DATA LIKE '%${kb}%' OR (TYPE = 'KnowledgeBaseDocumentsDeleted') ORDER BY GLOBAL_POSITION`,
      ),
    );
    const types = events.map((e) => e.TYPE);
    expect(types.filter((x) => x === 'KnowledgeBaseDocumentsInserted').length).toBeGreaterThanOrEqual(2);
    const deletion = events
      .filter((e) => e.TYPE === 'KnowledgeBaseDocumentsDeleted')
      .map((e) => JSON.parse(String(e.DATA)));
    expect(deletion.some((d) => JSON.stringify(d.ids) === JSON.stringify(['d2', 'd3']))).toBe(true);
  });

  it('given one INSERT repeating ids, then the last row of each id wins, as across INSERTs (20 rows, 3 ids → 3 documents)', async () => {
    const project = unique('p');
    const kb = unique('kb');
    await ok(t, `CREATE PROJECT ${project}`);
    await ok(
      t,
      `CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['content'], id_column = 'id'`,
    );
    const rows = Array.from({ length: 20 }, (_, i) => `('id${i % 3}', 'version ${i} of document ${i % 3}')`);
    await ok(t, `INSERT INTO ${project}.${kb} (id, content) VALUES ${rows.join(', ')}`);
    const stored = rowsOf(
      await ok(t, `SELECT id, chunk_id, chunk_content FROM ${project}.${kb} ORDER BY id`),
    );
    expect(stored.map((r) => [r.id, r.chunk_content])).toEqual([
      ['id0', 'version 18 of document 0'],
      ['id1', 'version 19 of document 1'],
      ['id2', 'version 17 of document 2'],
    ]);
    expect(new Set(stored.map((r) => r.chunk_id)).size).toBe(3);
  });

  it('inserts the rows of a SELECT from an uploaded file, chunked by chunk_size', async () => {
    const project = unique('p');
    const kb = unique('kb');
    await ok(t, `CREATE PROJECT ${project}`);
    await ok(
      t,
      `CREATE KNOWLEDGE BASE ${project}.${kb} USING params = {"chunk_size": 50, "chunk_overlap": 10}`,
    );
    const file = unique('notes');
    const long =
      'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau';
    await t.http
      .put(`/api/files/${file}`)
      .attach('file', Buffer.from(`id,content,author\n7,"${long}",ann\n8,short note,bo\n`), `${file}.csv`)
      .expect(200);
    const inserted = await ok(t, `INSERT INTO ${project}.${kb} SELECT * FROM files.${file}`);
    expect(inserted).toMatchObject({ type: 'ok', affected_rows: 2 });
    const chunks = rowsOf(
      await ok(t, `SELECT id, chunk_id, chunk_content, author FROM ${project}.${kb} WHERE id = '7'`),
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => String(c.chunk_content).length <= 50)).toBe(true);
    expect(chunks.every((c) => c.author === 'ann')).toBe(true);
    expect(chunks.map((c) => String(c.chunk_id).split(':')[1])).toEqual(
      chunks.map((_c, i) => `${i + 1}of${chunks.length}`),
    );
  });

  it('inserts the rows of a SELECT from a registered PostgreSQL integration, and finds one by its content', async () => {
    const pg = await freshPostgresData([
      'CREATE TABLE faq (ref text PRIMARY KEY, body text NOT NULL, area text NOT NULL)',
      `INSERT INTO faq VALUES
        ('q1', 'Passwords can be reset from the login page with the forgot password link.', 'accounts'),
        ('q2', 'Invoices are emailed on the first business day of every month.', 'billing'),
        ('q3', 'Parcels lost in transit are replaced free of charge after ten days.', 'shipping')`,
    ]);
    try {
      const db = await givenDatabase(t, { engine: 'postgres', parameters: pg.parameters });
      const project = unique('p');
      const kb = unique('kb');
      await ok(t, `CREATE PROJECT ${project}`);
      await ok(
        t,
        `CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['body'], id_column = 'ref', metadata_columns = ['area']`,
      );
      const inserted = await ok(
        t,
        `INSERT INTO ${project}.${kb} SELECT ref, body, area FROM ${db.name}.faq WHERE area <> 'billing'`,
      );
      expect(inserted).toMatchObject({ type: 'ok', affected_rows: 2 });
      const all = rowsOf(await ok(t, `SELECT id, chunk_content, area FROM ${project}.${kb} ORDER BY id`));
      expect(all).toEqual([
        {
          id: 'q1',
          chunk_content: 'Passwords can be reset from the login page with the forgot password link.',
          area: 'accounts',
        },
        {
          id: 'q3',
          chunk_content: 'Parcels lost in transit are replaced free of charge after ten days.',
          area: 'shipping',
        },
      ]);
      const found = rowsOf(
        await ok(
          t,
          `SELECT id, area, metadata FROM ${project}.${kb} WHERE content = 'my parcel was lost in transit' LIMIT 1`,
        ),
      );
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ id: 'q3', area: 'shipping' });
      expect(JSON.parse(String(found[0]!.metadata))).toEqual({ area: 'shipping' });
      const shown = rowsOf(await ok(t, `SHOW KNOWLEDGE_BASES FROM ${project}`));
      expect(shown[0]).toMatchObject({ NAME: kb, PROCESSED_ROWS: 2 });
      const logged = rowsOf(
        await ok(
          t,
          `SELECT TYPE, DATA FROM information_schema.EVENTS WHERE STREAM LIKE 'kb-%' AND DATA LIKE '%${project}%'`,
        ),
      );
      expect(logged.map((e) => [e.TYPE, JSON.parse(String(e.DATA))])).toEqual([
        [
          'KnowledgeBaseDocumentsInserted',
          expect.objectContaining({ project, name: kb, documents: 2, chunks: 2 }),
        ],
      ]);
      await t.http.delete(`/api/databases/${db.name}`).expect(204);
    } finally {
      await pg.drop();
    }
  });

  it('is listed by SHOW KNOWLEDGE_BASES, information_schema and SHOW TABLES, and dropped with DROP', async () => {
    const { project, kb } = await givenKnowledgeBase(t);
    const shown = rowsOf(await ok(t, `SHOW KNOWLEDGE_BASES FROM ${project}`));
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({ NAME: kb, PROJECT: project, ID_COLUMN: 'id', PROCESSED_ROWS: 4 });
    expect(JSON.parse(String(shown[0]!.PARAMS))).toMatchObject({
      metadata_columns: ['topic', 'year'],
      content_columns: ['content'],
      id_column: 'id',
    });
    const tables = rowsOf(await ok(t, `SHOW TABLES FROM ${project}`)).map((r) => r[`Tables_in_${project}`]);
    expect(tables).toContain(kb);
    const described = rowsOf(await ok(t, `DESCRIBE KNOWLEDGE_BASE ${project}.${kb}`));
    expect(described[0]).toMatchObject({ NAME: kb });
    await ok(t, `DROP KNOWLEDGE_BASE ${project}.${kb}`);
    expect(
      rowsOf(await ok(t, `SELECT NAME FROM information_schema.KNOWLEDGE_BASES WHERE PROJECT = '${project}'`)),
    ).toEqual([]);
    const gone = await querySql(t, `SELECT * FROM ${project}.${kb} WHERE content = 'x'`);
    expect(gone).toMatchObject({ type: 'error' });
    await ok(t, `DROP KNOWLEDGE_BASE IF EXISTS ${project}.${kb}`);
  });

  it('refuses what it cannot honour, naming it', async () => {
    const project = unique('p');
    await ok(t, `CREATE PROJECT ${project}`);
    const storage = await querySql(t, `CREATE KNOWLEDGE_BASE ${project}.k USING storage = pgvec.tbl`);
    expect(storage).toMatchObject({ type: 'error' });
    expect(storage.type === 'error' && storage.error_message).toMatch(/storage/);
    const insertTable = await querySql(t, `INSERT INTO ${project}.models (name) VALUES ('x')`);
    expect(insertTable.type === 'error' && insertTable.error_message).toMatch(
      /only knowledge bases take rows/,
    );
    const kb = unique('kb');
    await ok(t, `CREATE KNOWLEDGE_BASE ${project}.${kb}`);
    const noColumns = await querySql(t, `INSERT INTO ${project}.${kb} VALUES ('1', 'x')`);
    expect(noColumns.type === 'error' && noColumns.error_message).toMatch(/column list/);
    const dup = await querySql(t, `CREATE KNOWLEDGE_BASE ${project}.${kb}`);
    expect(dup.type === 'error' && dup.error_message).toMatch(/already exists/);
    await ok(t, `CREATE KNOWLEDGE_BASE IF NOT EXISTS ${project}.${kb}`);
    // `$question` is DuckDB's placeholder, not bound from params: the answer says which spelling is.
    const dollar = await querySql(t, `SELECT * FROM ${project}.${kb} WHERE content = $question`, {
      params: { question: 'refunds' },
    });
    expect(dollar).toMatchObject({ type: 'error', error_code: 1318 });
    expect(dollar.type === 'error' && dollar.error_message).toMatch(
      /\$question has no value.*:name or @name/,
    );
  });
});
