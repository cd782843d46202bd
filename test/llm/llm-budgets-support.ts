/**
 * What the LLM budget specs share: an app with sign-in on and LLM() served by the provider stand-in
 * (which counts the requests it gets), a query that plans a known number of calls, and the log's
 * refusals read back over SQL.
 */
import type { TestApp, StoreKind } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { ADMIN, login, startAuthApp } from '../auth/support';

/** The server's per-query cap in these specs: LLM_SQL_MAX_CALLS. */
export const SERVER_CAP = 5;

export type BudgetWorld = { t: TestApp; fake: FakeOpenAi; admin: string };

/** Sign-in on, LLM() on the stand-in, the server's per-query cap at SERVER_CAP. */
export const startBudgetWorld = async (
  kind: StoreKind,
  env: Record<string, string> = {},
): Promise<BudgetWorld> => {
  const fake = await startFakeOpenAi();
  fake.setFallback(fakeReply.text('fine'));
  const t = await startAuthApp(kind, {
    OPENAI_API_KEY: 'sk-server-key-budgets',
    OPENAI_BASE_URL: fake.baseUrl,
    LLM_FUNCTION_MODEL_NAME: 'fn-model',
    LLM_SQL_MAX_CALLS: String(SERVER_CAP),
    ...env,
  });
  return { t, fake, admin: await login(t, ADMIN.name, ADMIN.password) };
};

/**
 * A SELECT asking LLM() `n` distinct prompts: `n` provider requests (fewer than a batch's worth are
 * asked one by one, src/llmCalls/batching.ts). `salt` keeps the prompts out of the answer cache.
 */
export const plannedCalls = (n: number, salt: string) =>
  `SELECT LLM('Say ok to ' || x) AS a FROM (SELECT '${salt}-' || i AS x FROM range(${n}) r(i)) ORDER BY x`;

/** Who sends a statement over HTTP: a session cookie or a bearer token. */
export type Credential = { cookie: string } | { bearer: string };

export type SqlBody = {
  type: string;
  data?: unknown[][];
  column_names?: string[];
  error_code?: number;
  error_message?: string;
};

/** POST /api/sql/query as `who`, in database `db` (the project LLM() is counted under). */
export const sqlAs = async (t: TestApp, who: Credential, query: string, db = 'mindsdb') => {
  const request = t.http.post('/api/sql/query');
  if ('cookie' in who) request.set('Cookie', who.cookie);
  else request.set('Authorization', `Bearer ${who.bearer}`);
  return (await request.send({ query, context: { db } }).expect(200)).body as SqlBody;
};

export type Refusal = {
  stream: string;
  scope: string;
  subject: string | null;
  limit: string;
  allowed: number;
  spent: number;
  planned: number;
  caller: { actor: string; user: string | null; role: string | null };
  via: string;
};

/** The LlmBudgetRefused events of the log whose caller is `user`, in order (read by the admin). */
export const refusalsOf = async (w: BudgetWorld, user: string): Promise<Refusal[]> => {
  const answer = await sqlAs(
    w.t,
    { cookie: w.admin },
    `SELECT stream, CAST(data AS VARCHAR) FROM information_schema.EVENTS WHERE type = 'LlmBudgetRefused' ORDER BY global_position`,
  );
  return (answer.data ?? [])
    .map(([stream, data]) => ({
      stream: String(stream),
      ...(JSON.parse(String(data)) as Omit<Refusal, 'stream'>),
    }))
    .filter((r) => r.caller.user === user);
};

/** The events of the budgets' stream, `llm-budgets`, read by the admin. */
export const budgetEvents = async (w: BudgetWorld) =>
  (
    (await w.t.http.get('/api/events?stream=llm-budgets&limit=1000').set('Cookie', w.admin).expect(200))
      .body as {
      events: { type: string; data: Record<string, unknown>; actor: string | null }[];
    }
  ).events;

/** information_schema.LLM_BUDGETS's row of one budget: limits and today's spending. */
export const budgetRow = async (w: BudgetWorld, scope: string, subject: string) => {
  const answer = await sqlAs(
    w.t,
    { cookie: w.admin },
    `SELECT CALLS_PER_DAY, CALLS_TODAY, TOKENS_PER_DAY, TOKENS_TODAY, CALLS_PER_QUERY FROM information_schema.LLM_BUDGETS WHERE SCOPE = '${scope}' AND SUBJECT = '${subject}'`,
  );
  return answer.data?.[0];
};
