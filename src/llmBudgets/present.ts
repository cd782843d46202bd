import type { LlmBudget } from './state';

/** A budget as REST answers it (MindsDB-style snake_case), with what was spent under it today when known. */
export const presentLlmBudget = (budget: LlmBudget, spent?: { callsToday: number; tokensToday: number }) => ({
  scope: budget.scope,
  subject: budget.subject,
  calls_per_day: budget.callsPerDay,
  tokens_per_day: budget.tokensPerDay,
  calls_per_query: budget.callsPerQuery,
  ...(spent ? { calls_today: spent.callsToday, tokens_today: spent.tokensToday } : {}),
  set_at: budget.setAt,
});
