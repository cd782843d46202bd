/**
 * CREATE INDEX ON KNOWLEDGE_BASE p.kb (MindsDB's syntax), by an editor: the knowledge base's
 * postings (its keyword index, appended unsorted with every insert) are compacted into term order.
 * Each statement records KnowledgeBaseIndexed on the knowledge base's stream (so a rebuild compacts
 * at the same point) and answers once the postings are rewritten; postings inserted afterwards are
 * appended after them until the next. The knowledge base searches as before. Any other CREATE INDEX
 * is still refused; a read-only role is refused; an unknown knowledge base is named.
 */
import { storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, sqlOver, startAuthApp, userWithRole } from '../auth/support';
import { kbTables } from '../../src/engines/search/layout';
import { unique } from './support-eval';

describe.each(storeKinds)('CREATE INDEX ON KNOWLEDGE_BASE (%s)', (store) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(async () => {
    await t.dispose();
  });
  const sql = (query: string, cookie = admin) => sqlOver(t, cookie, query);
  /** The types of the knowledge base's events, oldest first. */
  const kbEventTypes = async (kbId: number) =>
    (
      (await t.http.get(`/api/events?stream=kb-${kbId}&limit=1000`).set('Cookie', admin).expect(200))
        .body as { events: { type: string }[] }
    ).events.map((e) => e.type);
  /** The postings' (term id, row id) in the order they are stored. */
  const storedPostings = (kbId: number) =>
    t.running.ctx.duck.withReader(async (c) =>
      (await c.runAndReadAll(`SELECT TERM_ID, ROW_ID FROM ${kbTables(kbId).terms} ORDER BY rowid`))
        .getRowsJS()
        .map(([term, row]) => [Number(term), BigInt(row as bigint)] as const),
    );
  const inTermOrder = (postings: readonly (readonly [number, bigint])[]) =>
    [...postings].sort(([ta, ra], [tb, rb]) => ta - tb || (ra < rb ? -1 : ra > rb ? 1 : 0));

  const givenKnowledgeBase = async () => {
    const project = unique('p');
    const kb = unique('kb');
    expect(await sql(`CREATE PROJECT ${project}`)).toMatchObject({ type: 'ok' });
    expect(
      await sql(
        `CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['content'], id_column = 'id'`,
      ),
    ).toMatchObject({ type: 'ok' });
    expect(
      await sql(
        `INSERT INTO ${project}.${kb} (id, content) VALUES ('a', 'xenon yarrow'), ('b', 'vortex whale xenon')`,
      ),
    ).toMatchObject({ type: 'ok' });
    return { project, kb };
  };

  it('records KnowledgeBaseIndexed each time and answers with the postings in term order; later inserts append after them; searches answer as before', async () => {
    const { project, kb } = await givenKnowledgeBase();
    const kbId = (
      (await t.http.get(`/api/projects/${project}/knowledge_bases/${kb}`).set('Cookie', admin).expect(200))
        .body as { id: number }
    ).id;
    const search = `SELECT id, chunk_id, relevance, distance FROM ${project}.${kb} WHERE content = 'vortex xenon' LIMIT 5`;
    const before = await sql(search);
    const unsorted = await storedPostings(kbId);
    expect(unsorted).not.toEqual(inTermOrder(unsorted));

    expect(await sql(`CREATE INDEX ON KNOWLEDGE_BASE ${project}.${kb}`)).toMatchObject({
      type: 'ok',
      affected_rows: null,
    });
    expect(await kbEventTypes(kbId)).toEqual(['KnowledgeBaseDocumentsInserted', 'KnowledgeBaseIndexed']);
    expect(await storedPostings(kbId)).toEqual(inTermOrder(unsorted));
    expect(await sql(search)).toEqual(before);
    expect(before.data!.map(([id]) => id).sort()).toEqual(['a', 'b']);

    expect(
      await sql(`INSERT INTO ${project}.${kb} (id, content) VALUES ('c', 'alpha zeta vortex')`),
    ).toMatchObject({ type: 'ok' });
    const appended = await storedPostings(kbId);
    expect(appended.slice(0, unsorted.length)).toEqual(inTermOrder(unsorted));
    expect(appended).not.toEqual(inTermOrder(appended));
    const grown = await sql(search);

    expect(await sql(`create index on knowledge base ${project}.${kb};`)).toMatchObject({ type: 'ok' });
    expect(await kbEventTypes(kbId)).toEqual([
      'KnowledgeBaseDocumentsInserted',
      'KnowledgeBaseIndexed',
      'KnowledgeBaseDocumentsInserted',
      'KnowledgeBaseIndexed',
    ]);
    expect(await storedPostings(kbId)).toEqual(inTermOrder(appended));
    expect(await sql(search)).toEqual(grown);
  });

  it('names an unknown knowledge base, refuses a read-only role, and still refuses any other CREATE INDEX', async () => {
    const { project, kb } = await givenKnowledgeBase();
    const missing = await sql(`CREATE INDEX ON KNOWLEDGE_BASE ${project}.nothing_here`);
    expect(missing).toMatchObject({ type: 'error' });
    expect(missing.error_message).toContain(`CREATE INDEX ON KNOWLEDGE_BASE ${project}.nothing_here`);
    const analyst = await userWithRole(t, admin, unique('analyst'), 'analyst');
    const refused = await sql(`CREATE INDEX ON KNOWLEDGE_BASE ${project}.${kb}`, analyst.cookie);
    expect(refused).toMatchObject({ type: 'error', error_code: 1227 });
    const other = await sql(`CREATE INDEX by_name ON ${project}.knowledge_bases (name)`);
    expect(other).toMatchObject({ type: 'error', error_code: 1227 });
    expect(other.error_message).toMatch(/^CREATE INDEX is not supported/);
  });
});
