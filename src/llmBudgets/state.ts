import type { LlmBudgetLimit, LlmBudgetScope, RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';

/** Every budget on one stream: set by admins now and then, read before every query's LLM calls. */
export const LLM_BUDGETS_STREAM = 'llm-budgets';

/** A budget's limits (null: no such limit). */
export type LlmBudgetLimits = {
  readonly callsPerDay: number | null;
  readonly tokensPerDay: number | null;
  readonly callsPerQuery: number | null;
};

export type LlmBudget = LlmBudgetLimits & {
  readonly scope: LlmBudgetScope;
  readonly subject: string;
  readonly setAt: string;
};

/**
 * What a budget holds, as the recorded calls name a caller: `user:<name>` (names are case-blind),
 * `token:<id>` (the call's actor, ids are not), `project:<name>`.
 */
export const budgetKey = (scope: LlmBudgetScope, subject: string) =>
  `${scope}:${scope === 'token' ? subject : nameKey(subject)}`;

export type LlmBudgetsState = { readonly budgets: ReadonlyMap<string, LlmBudget> };

export const evolveLlmBudgets = (state: LlmBudgetsState, event: RecordedEvent): LlmBudgetsState => {
  switch (event.type) {
    case 'LlmBudgetSet': {
      const { setAt, scope, subject, callsPerDay, tokensPerDay, callsPerQuery } = event.data;
      const budgets = new Map(state.budgets);
      budgets.set(budgetKey(scope, subject), {
        scope,
        subject,
        callsPerDay,
        tokensPerDay,
        callsPerQuery,
        setAt,
      });
      return { budgets };
    }
    case 'LlmBudgetDropped': {
      const budgets = new Map(state.budgets);
      budgets.delete(budgetKey(event.data.scope, event.data.subject));
      return { budgets };
    }
    default:
      return state;
  }
};

export const llmBudgetsAggregate: Aggregate<LlmBudgetsState> = {
  initialState: () => ({ budgets: new Map() }),
  evolve: evolveLlmBudgets,
};

/** Who is about to spend: as the recorded calls name them (`budgetKey`). */
export type Spender = {
  readonly user: string | null;
  /** `token:<id>` when the caller came with an access token. */
  readonly actor: string;
  readonly project: string | null;
};

/** The budgets that hold a spender, as they stand today: what a query's LLM calls are checked against. */
export type SpendingPort = (spender: Spender) => Promise<BudgetStanding[]>;

/** A budget that holds a query's caller, with what was spent under it today (UTC). */
export type BudgetStanding = LlmBudget & { readonly callsToday: number; readonly tokensToday: number };

/** What a query's LLM function is about to ask: provider requests, estimated tokens, and the query's earlier requests. */
export type SpendPlan = {
  readonly calls: number;
  /** Estimated: prompt characters / 4 (what is sent; the answers' tokens are not known before). */
  readonly tokens: number;
  /** Requests planned by the query's earlier LLM functions. */
  readonly before: number;
};

/** The limit a query would pass, and by how much. */
export type BudgetRefusal = {
  readonly scope: LlmBudgetScope | 'server';
  readonly subject: string | null;
  readonly limit: LlmBudgetLimit;
  readonly allowed: number;
  readonly spent: number;
  readonly planned: number;
};

/**
 * The limit a plan would pass, or null. Per query: the smallest calls_per_query of the caller's
 * budgets, else the server's cap (LLM_SQL_MAX_CALLS), so a budget may raise it. Per day: each
 * budget's calls and tokens, spent today plus planned. Of the limits passed, the tightest (the least
 * left before the query) is named.
 */
export const refusalOf = (
  standings: readonly BudgetStanding[],
  plan: SpendPlan,
  serverCap: number,
): BudgetRefusal | null => {
  const passed: BudgetRefusal[] = [];
  const perQuery = standings
    .filter((s) => s.callsPerQuery !== null)
    .sort((a, b) => a.callsPerQuery! - b.callsPerQuery!)[0];
  const cap = perQuery
    ? { scope: perQuery.scope, subject: perQuery.subject, allowed: perQuery.callsPerQuery! }
    : { scope: 'server' as const, subject: null, allowed: serverCap };
  if (plan.before + plan.calls > cap.allowed)
    passed.push({ ...cap, limit: 'calls_per_query', spent: plan.before, planned: plan.calls });
  if (plan.calls > 0)
    for (const s of standings) {
      const { scope, subject } = s;
      if (s.callsPerDay !== null && s.callsToday + plan.calls > s.callsPerDay)
        passed.push({
          scope,
          subject,
          limit: 'calls_per_day',
          allowed: s.callsPerDay,
          spent: s.callsToday,
          planned: plan.calls,
        });
      if (s.tokensPerDay !== null && s.tokensToday + plan.tokens > s.tokensPerDay)
        passed.push({
          scope,
          subject,
          limit: 'tokens_per_day',
          allowed: s.tokensPerDay,
          spent: s.tokensToday,
          planned: plan.tokens,
        });
    }
  return passed.sort((a, b) => a.allowed - a.spent - (b.allowed - b.spent))[0] ?? null;
};

/** How a refusal reads in the query's error. */
export const describeRefusal = (r: BudgetRefusal, what: string) => {
  const holder = r.subject === null ? 'the server' : `${r.scope} ${r.subject}`;
  const spent = r.limit === 'calls_per_query' ? 'the query planned' : 'spent today';
  const unit = r.limit === 'tokens_per_day' ? 'estimated tokens' : 'calls';
  return `${what} would make ${r.planned} ${unit}: the LLM budget of ${holder} allows ${r.limit} = ${r.allowed} (${spent}: ${r.spent}); refused before any call`;
};
