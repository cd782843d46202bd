/**
 * Issue 57: MCP sessions capped per principal (one caller's initialize loop closed everyone's),
 * GET /api/audit/verify without the server's absolute paths, and errors that name the real problem.
 */
import { sessionRegistry, type Session } from '../../src/mcp/sessions';
import { startTestApp, type TestApp } from '../support/app';

const fakeSession = (id: string, owner: string, principal: string, lastUsed: number) => {
  const closed = { yes: false };
  const session = {
    id,
    owner,
    principal,
    lastUsed,
    transport: { close: async () => void (closed.yes = true) },
    server: { close: async () => undefined },
  } as unknown as Session;
  return { session, closed };
};

describe('MCP sessions per principal', () => {
  it("given user B's session, when user A initializes past the process's cap, then B's session survives and A's oldest go", () => {
    let now = 0;
    const sessions = sessionRegistry({ max: 10, idleMs: 60_000, now: () => now });
    const b = fakeSession('b', 'user:2', 'user:b', now);
    sessions.add(b.session);
    const a = Array.from({ length: 50 }, (_, i) => fakeSession(`a${i}`, 'token:x', 'user:a', ++now));
    for (const s of a) sessions.add(s.session);
    expect(b.closed.yes).toBe(false);
    expect(sessions.use('b', 'user:2')).toBeDefined();
    expect(sessions.use('a49', 'token:x')).toBeDefined();
    expect(sessions.use('a0', 'token:x')).toBeUndefined();
    expect(sessions.size()).toBeLessThanOrEqual(10);
  });
});

describe('errors that name the real problem, and paths', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  }, 60_000);
  afterAll(() => t.dispose());

  const sql = async (query: string) =>
    (await t.http.post('/api/sql/query').send({ query }).expect(200)).body as {
      type: string;
      error_message?: string;
    };

  it('INSERT INTO an unregistered database says that database does not exist', async () => {
    const answer = await sql('INSERT INTO nowhere_db.t (a) VALUES (1)');
    expect(answer.error_message).toMatch(/^Database nowhere_db does not exist/);
    expect(answer.error_message).not.toMatch(/only knowledge bases take rows/);
  });

  it("USING engine = 'openai' says no ML engine of that name exists and shows the CREATE ML_ENGINE that makes one", async () => {
    const answer = await sql(
      "CREATE MODEL mindsdb.m_openai PREDICT answer USING engine = 'openai', prompt_template = 'say {{q}}'",
    );
    expect(answer.error_message).toMatch(
      /No ML engine named openai exists: make one with CREATE ML_ENGINE openai FROM openai USING openai_api_key = '…'/,
    );
  });

  it('reading an uploaded file as of a past position says uploaded files keep no history', async () => {
    const answer = await sql('SELECT * FROM files.uploaded AS OF POSITION 1');
    expect(answer.error_message).toMatch(
      /uploaded files keep no history, so a replay as of a past position cannot read them/,
    );
    expect(answer.error_message).not.toMatch(/Database files does not exist/);
  });

  it("GET /api/audit/verify names no absolute path of the server's (the witness relative to DATA_DIR)", async () => {
    await sql('CREATE PROJECT audited');
    const res = await t.http.get('/api/audit/verify').expect(200);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(t.running.ctx.config.dataDir);
    expect((res.body as { witnesses?: { sources: string[] } }).witnesses?.sources).toEqual([
      expect.stringMatching(/^ledger-witness/),
    ]);
  });
});
