import type { LlmBudgetScope } from '../../events';
import type { AppContext } from '../context';
import { streamCommand } from '../projectCommand';
import { decideLlmBudget, type LlmBudgetCommand } from './decider';
import { allBudgets, llmBudgetsTable, spendingOf } from './projection';
import {
  budgetKey,
  llmBudgetsAggregate,
  LLM_BUDGETS_STREAM,
  budgetHoldings,
  type Admission,
  type BudgetRefusal,
  type BudgetStanding,
  type LlmBudgetLimits,
  type SpendRequest,
  type Spender,
} from './state';

/** Midnight UTC of `now`'s day: daily limits count from there. */
const dayStartOf = (now: Date) =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

const toNumber = (n: unknown) => (n === null || n === undefined ? null : Number(n));

/** How many times a check reads the standings while batches land under it. */
const MAX_READS = 5;

/** What budgets need of the LLM calls' side: a refusal recorded beside the calls it refused. */
type LlmBudgetPorts = {
  /** The refusal on the query's (or run's) stream, in the read model before the caller is answered. */
  readonly recordRefusal: (request: SpendRequest, refusal: BudgetRefusal) => Promise<void>;
};

/**
 * LLM budgets: set and dropped by admins on one stream (`llm-budgets`), and the standing of the ones
 * that hold a caller (limits, and what was spent today from the recorded calls) for the check made
 * before a query's first LLM call (src/llmCalls/asking.ts).
 */
export const llmBudgetsService = (ctx: AppContext, ports: LlmBudgetPorts) => {
  const run = (command: LlmBudgetCommand) =>
    streamCommand(ctx, {
      stream: LLM_BUDGETS_STREAM,
      aggregate: llmBudgetsAggregate,
      command,
      decide: decideLlmBudget,
      answer: 'settled',
    });
  /** The keys of the budgets in force, kept until `llm_budgets` changes. */
  const budgetKeys = () =>
    ctx.cachedOf(llmBudgetsTable.table)(
      'llm-budget-keys',
      async () => new Set((await allBudgets(ctx.duck)).map((r) => r.BUDGET_KEY)),
    );
  /** The budgets of these keys as they stand today. */
  const standings = async (keys: readonly string[]): Promise<BudgetStanding[]> =>
    (await spendingOf(ctx.duck, keys, dayStartOf(ctx.clock()))).map((r) => ({
      scope: r.SCOPE as LlmBudgetScope,
      subject: r.SUBJECT,
      callsPerDay: toNumber(r.CALLS_PER_DAY),
      tokensPerDay: toNumber(r.TOKENS_PER_DAY),
      callsPerQuery: toNumber(r.CALLS_PER_QUERY),
      setAt: String(r.SET_AT),
      callsToday: Number(r.CALLS_TODAY),
      tokensToday: Number(r.TOKENS_TODAY),
    }));
  /** The budgets that hold a spender (its user's, its token's, its project's), as they stand today. */
  const standingsOf = async (spender: Spender) => {
    const set = await budgetKeys();
    const keys = [
      ...(spender.user !== null ? [budgetKey('user', spender.user)] : []),
      ...(spender.actor.startsWith('token:') ? [spender.actor] : []),
      ...(spender.project !== null ? [budgetKey('project', spender.project)] : []),
    ].filter((k) => set.has(k));
    return keys.length === 0 ? [] : standings(keys);
  };
  const holdings = budgetHoldings();
  const admit = async (request: SpendRequest): Promise<Admission> => {
    const { caller } = request.who;
    const spender = { user: caller.user, actor: caller.actor, project: request.project };
    const applied = (position: bigint) => ctx.projections.applied(position);
    for (let attempt = 1; ; attempt++) {
      const epoch = ctx.projections.dataEpoch;
      const read = holdings.beginRead(applied);
      const standingsRead = await standingsOf(spender).catch((error: unknown) => {
        holdings.abandon(read);
        throw error;
      });
      // A batch written while the standings were read may hold calls also counted as held: read
      // again (a few times at most; then the holdings count twice for a moment, refusing early).
      const moved = epoch % 2 === 1 || ctx.projections.dataEpoch !== epoch || holdings.appliedSince(applied);
      if (moved && standingsRead.length > 0 && attempt < MAX_READS) {
        holdings.abandon(read);
        continue;
      }
      const admission = holdings.admit(read, standingsRead, request.plan, request.serverCap);
      if (admission.refusal) await ports.recordRefusal(request, admission.refusal);
      return admission;
    }
  };

  return {
    /** Sets (or replaces) the budget of a user, a token or a project; answers it as it stands. */
    set: async (scope: LlmBudgetScope, subject: string, limits: LlmBudgetLimits) => {
      await run({ type: 'SetLlmBudget', data: { scope, subject, ...limits } });
      return (await standings([budgetKey(scope, subject)]))[0]!;
    },
    drop: async (scope: LlmBudgetScope, subject: string, ifExists: boolean) => {
      await run({ type: 'DropLlmBudget', data: { scope, subject, ifExists } });
    },
    /** Every budget, as it stands today. */
    list: async () => standings([...(await budgetKeys())]),
    /**
     * Checks spending against the budgets that hold its caller (user, token, project) before its
     * first call: refused, recorded; or admitted and held until released. With no budget set for
     * the caller, only the server's per-query cap is checked and no spending is read.
     */
    admit,
  };
};

export type LlmBudgetsService = ReturnType<typeof llmBudgetsService>;
