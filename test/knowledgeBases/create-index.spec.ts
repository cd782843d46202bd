/**
 * CREATE INDEX ON KNOWLEDGE_BASE p.kb (MindsDB's syntax): accepted for a knowledge base by an editor,
 * and idempotent. A knowledge base's keyword index is written with every insert and its vectors are
 * searched exactly, so there is nothing to build: the statement answers ok, appends no event, and
 * the knowledge base searches as before. Any other CREATE INDEX is still refused; a read-only role
 * is refused; an unknown knowledge base is named.
 */
import { storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, sqlOver, startAuthApp, userWithRole } from '../auth/support';
import { readyAtHead } from '../support/hostile';
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
  /** The log's head: where the next event would be appended. */
  const logHead = async () => ((await readyAtHead(t))?.log_head ?? '') as string;

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
        `INSERT INTO ${project}.${kb} (id, content) VALUES ('a', 'xenon yarrow'), ('b', 'vortex whale')`,
      ),
    ).toMatchObject({ type: 'ok' });
    return { project, kb };
  };

  it('is accepted for a knowledge base, twice, appends nothing, and the knowledge base searches as before', async () => {
    const { project, kb } = await givenKnowledgeBase();
    const search = `SELECT id FROM ${project}.${kb} WHERE content = 'vortex' LIMIT 1`;
    const before = await sql(search);
    const length = await logHead();
    for (const statement of [
      `CREATE INDEX ON KNOWLEDGE_BASE ${project}.${kb}`,
      `create index on knowledge base ${project}.${kb};`,
    ])
      expect(await sql(statement)).toMatchObject({ type: 'ok', affected_rows: null });
    expect(await logHead()).toEqual(length);
    expect(await sql(search)).toEqual(before);
    expect(before.data).toEqual([['b']]);
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
