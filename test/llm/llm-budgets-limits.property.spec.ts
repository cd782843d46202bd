/**
 * What a budget promises, as properties: (1) the check before a query's calls admits a plan exactly
 * when no limit of the caller's budgets (nor the per-query cap) would be passed, and names the
 * tightest limit passed (the least left before the query), with a kill check beside it; (2) every
 * hostile limit or holder sent over REST or SQL is answered with a 400 problem or a SQL error naming
 * the field, never a 500, and appends nothing.
 */
import fc from 'fast-check';
import type { LlmBudgetScope } from '../../events';
import {
  refusalOf,
  type BudgetRefusal,
  type BudgetStanding,
  type SpendPlan,
} from '../../src/llmBudgets/state';
import { problemOf, storeKinds } from '../support/app';
import { hostileString, lit, pathSegment, clip, deepJson } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { budgetEvents, sqlAs, startBudgetWorld, type BudgetWorld } from './llm-budgets-support';

const SEED = propertySeed();
const RUNS = propertyRuns(300);
const APP_RUNS = propertyRuns(25);

const limit = fc.option(fc.integer({ min: 0, max: 60 }), { nil: null });
const standing: fc.Arbitrary<BudgetStanding> = fc.record({
  scope: fc.constantFrom<LlmBudgetScope>('user', 'token', 'project'),
  subject: fc.constantFrom('a', 'b'),
  callsPerDay: limit,
  tokensPerDay: limit,
  callsPerQuery: limit,
  setAt: fc.constant('2026-01-01T00:00:00.000Z'),
  callsToday: fc.integer({ min: 0, max: 60 }),
  tokensToday: fc.integer({ min: 0, max: 60 }),
});
const plan: fc.Arbitrary<SpendPlan> = fc.record({
  calls: fc.integer({ min: 0, max: 30 }),
  tokens: fc.integer({ min: 0, max: 30 }),
  before: fc.integer({ min: 0, max: 30 }),
});
const world = fc.tuple(fc.array(standing, { maxLength: 3 }), plan, fc.integer({ min: 0, max: 40 }));

/** Every limit the plan would pass, worked out plainly from the rules in docs/llm-models.md "Budgets". */
const limitsPassed = (standings: readonly BudgetStanding[], p: SpendPlan, cap: number) => {
  const passed: { scope: string; limit: string; left: number }[] = [];
  const perQuery = standings.flatMap((s) => (s.callsPerQuery === null ? [] : [s.callsPerQuery]));
  const queryCap = perQuery.length ? Math.min(...perQuery) : cap;
  if (p.before + p.calls > queryCap)
    passed.push({
      scope: perQuery.length ? '*' : 'server',
      limit: 'calls_per_query',
      left: queryCap - p.before,
    });
  for (const s of standings) {
    if (p.calls === 0) break;
    if (s.callsPerDay !== null && s.callsToday + p.calls > s.callsPerDay)
      passed.push({ scope: s.scope, limit: 'calls_per_day', left: s.callsPerDay - s.callsToday });
    if (s.tokensPerDay !== null && s.tokensToday + p.tokens > s.tokensPerDay)
      passed.push({ scope: s.scope, limit: 'tokens_per_day', left: s.tokensPerDay - s.tokensToday });
  }
  return passed;
};

/** Why a decision breaks the promise, or null. */
const violation = (
  standings: readonly BudgetStanding[],
  p: SpendPlan,
  cap: number,
  decided: BudgetRefusal | null,
) => {
  const passed = limitsPassed(standings, p, cap);
  if (decided === null) return passed.length ? `admitted past ${JSON.stringify(passed)}` : null;
  if (!passed.length) return `refused ${JSON.stringify(decided)} with no limit passed`;
  const tightest = Math.min(...passed.map((x) => x.left));
  if (decided.allowed - decided.spent !== tightest)
    return `named ${JSON.stringify(decided)}, not the tightest`;
  return passed.some((x) => x.limit === decided.limit) ? null : `named a limit not passed`;
};

describe('LLM budgets: the check before the calls', () => {
  it('admits a plan exactly when no limit would be passed, and names the tightest limit passed', () => {
    fc.assert(
      fc.property(
        world,
        ([standings, p, cap]) => violation(standings, p, cap, refusalOf(standings, p, cap)) === null,
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("kill check: a check that forgets projects' budgets is caught by the same property", () => {
    const forgetsProjects = (standings: readonly BudgetStanding[], p: SpendPlan, cap: number) =>
      refusalOf(
        standings.filter((s) => s.scope !== 'project'),
        p,
        cap,
      );
    const found = fc.check(
      fc.property(
        world,
        ([standings, p, cap]) => violation(standings, p, cap, forgetsProjects(standings, p, cap)) === null,
      ),
      { seed: SEED, numRuns: RUNS },
    );
    expect(found.failed).toBe(true);
  });
});

/** Limits no budget may hold, as JSON sends them. */
const hostileLimit: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ max: -1 }),
  fc.constantFrom(1e13, Number.MAX_SAFE_INTEGER + 2, 1.5, 'NaN', '12', true, [], {}),
  fc.double({ noInteger: true, noDefaultInfinity: true, noNaN: true }),
  hostileString,
  fc.constant(deepJson(40)),
);
/** Limits no budget may hold, as SQL writes them. */
const hostileSqlLimit: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ max: -1 }).map(String),
  fc.constantFrom('1e13', '9007199254740993', '1.5', 'NaN', 'TRUE', '[1]', '{"a": 1}'),
  hostileString.map(lit),
);
const field = fc.constantFrom('calls_per_day', 'tokens_per_day', 'calls_per_query');

describe.each(storeKinds)('LLM budgets: hostile limits and holders (%s)', (kind) => {
  let w: BudgetWorld;
  beforeAll(async () => {
    w = await startBudgetWorld(kind);
  });
  afterAll(async () => {
    await w?.t.dispose();
    await w?.fake.close();
  });

  it('answers a hostile limit over REST with a 400 problem naming the field, appending nothing', async () => {
    const before = (await budgetEvents(w)).length;
    await fc.assert(
      fc.asyncProperty(field, hostileLimit, async (name, value) => {
        const res = await w.t.http
          .put('/api/llm/budgets/user/hostile_rest')
          .set('Cookie', w.admin)
          .send({ [name]: value });
        expect(res.status).toBe(400);
        expect(problemOf(res).detail).toContain(`body.${name}`);
      }),
      { seed: SEED, numRuns: APP_RUNS },
    );
    expect(await budgetEvents(w)).toHaveLength(before);
  });

  it('answers a hostile limit in SQL with an error naming the option, appending nothing', async () => {
    const before = (await budgetEvents(w)).length;
    await fc.assert(
      fc.asyncProperty(field, hostileSqlLimit, async (name, value) => {
        const answer = await sqlAs(
          w.t,
          { cookie: w.admin },
          `CREATE LLM_BUDGET FOR USER hostile_sql USING ${name} = ${value}`,
        );
        const said = clip(answer.error_message ?? '');
        expect([answer.type, answer.error_code, said]).toEqual([
          'error',
          1210,
          expect.stringContaining(`CREATE LLM_BUDGET: ${name}:`),
        ]);
      }),
      { seed: SEED, numRuns: APP_RUNS },
    );
    expect(await budgetEvents(w)).toHaveLength(before);
  });

  it('answers a hostile holder over REST and SQL with a refusal naming it, or keeps it as sent', async () => {
    await fc.assert(
      fc.asyncProperty(hostileString, fc.boolean(), async (subject, raw) => {
        const res = await w.t.http
          .put(`/api/llm/budgets/project/${pathSegment(subject, raw)}`)
          .set('Cookie', w.admin)
          .send({ calls_per_day: 1 });
        // As UTF-8 in the path, a lone surrogate is sent as U+FFFD (the path carries that, not the surrogate).
        if (res.status === 200)
          expect(res.body).toMatchObject({
            scope: 'project',
            subject: subject.toWellFormed(),
            calls_per_day: 1,
          });
        else {
          // 431: a path too long for the server's headers, refused before any route.
          expect([400, 404, 431]).toContain(res.status);
          if (res.status === 400) expect(problemOf(res).detail).toMatch(/subject|path/);
        }
        const answer = await sqlAs(
          w.t,
          { cookie: w.admin },
          `CREATE LLM_BUDGET FOR PROJECT ${lit(subject)} USING calls_per_day = 1`,
        );
        if (answer.type === 'error') {
          expect(answer.error_code).not.toBe(1105);
          if (answer.error_code === 1210) expect(answer.error_message).toContain('CREATE LLM_BUDGET: ');
        }
      }),
      { seed: SEED, numRuns: APP_RUNS },
    );
  });
});
