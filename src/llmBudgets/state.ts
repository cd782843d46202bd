import type { LlmBudgetLimit, LlmBudgetScope, RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { DomainError } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { CallerOfRequest } from '../shared/requestContext';

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

const evolveLlmBudgets = (state: LlmBudgetsState, event: RecordedEvent): LlmBudgetsState => {
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

/**
 * Spending asked for, before its first provider request: by a query's LLM function (`queryId` its
 * query, `what` `LLM()` or `LLM model p.m`) or by one of an agent run's model calls (`queryId` its
 * trace id, `what` `agent p.a`).
 */
export type SpendRequest = {
  readonly queryId: string;
  readonly what: string;
  readonly who: CallerOfRequest;
  readonly project: string | null;
  readonly plan: SpendPlan;
  /** The per-query cap when no budget sets one (LLM_SQL_MAX_CALLS for queries; none for agent runs). */
  readonly serverCap: number;
};

/**
 * The answer to a spend request: refused (the refusal is in the log before this answers), or
 * admitted with the planned calls and tokens held against the caller's budgets until the calls'
 * records are in the read model. `release` gives the log position of the last record (null: none
 * was made); from the first read that sees it applied, the calls count as spent instead of held.
 */
export type Admission =
  | { readonly refusal: BudgetRefusal }
  | { readonly refusal: null; readonly release: (recordedUpTo: bigint | null) => void };

/** Checks spending against the budgets that hold its caller (src/llmBudgets/service.ts). */
export type SpendingPort = (request: SpendRequest) => Promise<Admission>;

/** A budget's limit a query or run would pass (docs/llm-models.md "Budgets"): refused before any call (SQL error 1227). */
export class LlmBudgetExceeded extends DomainError {
  constructor(detail: string) {
    super('Forbidden', 'LLM budget exceeded', detail);
  }
}

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

/** Calls and tokens admitted against some budgets (keys), until a read sees them spent. */
type Holding = {
  readonly keys: readonly string[];
  readonly calls: number;
  readonly tokens: number;
  /** Undefined while the calls are made; then the position of their last record (null: none). */
  recordedUpTo?: bigint | null;
  /** The first read that began after the records were applied: it and every later one count them. */
  seenBy?: number;
};

/**
 * What this process has admitted and the read model may not show yet, so that requests started
 * together cannot both pass a limit only one fits in. A request's check is two steps with a wait
 * between: `beginRead` (before the standings are read) and `admit` (with what was read). A holding
 * counts for a read unless its records were applied before that read began: then the read counted
 * them as spent. (Other processes' calls count once they are in this read model.)
 */
export const budgetHoldings = () => {
  const holdings = new Set<Holding>();
  const reading = new Set<number>();
  let reads = 0;
  /** Holdings every read in flight and every later one counts as spent: no longer needed. */
  const prune = () => {
    const oldest = Math.min(reads + 1, ...reading);
    for (const h of holdings) if (h.seenBy !== undefined && h.seenBy <= oldest) holdings.delete(h);
  };
  const heldFor = (read: number, key: string) => {
    let calls = 0;
    let tokens = 0;
    for (const h of holdings)
      if ((h.seenBy === undefined || h.seenBy > read) && h.keys.includes(key)) {
        calls += h.calls;
        tokens += h.tokens;
      }
    return { calls, tokens };
  };
  return {
    /** Called just before the standings are read; `applied` says whether a log position is in the read model. */
    beginRead: (applied: (position: bigint) => boolean): number => {
      const read = ++reads;
      for (const h of holdings)
        if (h.seenBy === undefined && h.recordedUpTo !== undefined)
          if (h.recordedUpTo === null || applied(h.recordedUpTo)) h.seenBy = read;
      reading.add(read);
      return read;
    },
    /** The read's standings with what is held against them: refused, or admitted and held. */
    admit: (
      read: number,
      standings: readonly BudgetStanding[],
      plan: SpendPlan,
      serverCap: number,
    ): Admission => {
      reading.delete(read);
      const counted = standings.map((s) => {
        const h = heldFor(read, budgetKey(s.scope, s.subject));
        return { ...s, callsToday: s.callsToday + h.calls, tokensToday: s.tokensToday + h.tokens };
      });
      prune();
      const refusal = refusalOf(counted, plan, serverCap);
      if (refusal) return { refusal };
      const holding: Holding = {
        keys: standings.map((s) => budgetKey(s.scope, s.subject)),
        calls: plan.calls,
        tokens: plan.tokens,
      };
      if (holding.keys.length > 0) holdings.add(holding);
      return {
        refusal: null,
        release: (recordedUpTo) => {
          if (holding.recordedUpTo === undefined) holding.recordedUpTo = recordedUpTo;
        },
      };
    },
    /**
     * Whether a holding's records were applied since `read` began: the read may have counted them
     * as spent while they are counted as held too (a refusal that should not be). Asked after the
     * read, to read again.
     */
    appliedSince: (applied: (position: bigint) => boolean): boolean => {
      for (const h of holdings)
        if (h.seenBy === undefined && h.recordedUpTo !== undefined)
          if (h.recordedUpTo === null || applied(h.recordedUpTo)) return true;
      return false;
    },
    /** A read that failed, or is read again: it holds nothing back. */
    abandon: (read: number) => {
      reading.delete(read);
      prune();
    },
    /** How many holdings are kept (for specs: they do not pile up). */
    size: () => holdings.size,
  };
};
