import { z } from 'zod';
import { LLM_BUDGET_SCOPES, MAX_LLM_BUDGET_LIMIT } from '../../events';
import { hasLoneSurrogate } from '../shared/jsonBounds';
import type { LlmBudgetLimits } from './state';

/** A limit as sent: a whole number from 0 (nothing may be spent) to MAX_LLM_BUDGET_LIMIT, or null (none). */
const limit = z
  .number({ error: 'must be a whole number from 0, or null' })
  .int('must be a whole number')
  .min(0, 'must not be negative')
  .max(MAX_LLM_BUDGET_LIMIT, `must be at most ${MAX_LLM_BUDGET_LIMIT}`)
  .nullable()
  .optional();

/** A budget's limits, as SQL options (`USING calls_per_day = 10, …`) and as REST's body name them. */
export const llmBudgetLimits = z.strictObject({
  calls_per_day: limit,
  tokens_per_day: limit,
  calls_per_query: limit,
});

/** The limits sent, as the budget keeps them (a limit not sent: none). */
export const limitsOf = (sent: z.infer<typeof llmBudgetLimits>): LlmBudgetLimits => ({
  callsPerDay: sent.calls_per_day ?? null,
  tokensPerDay: sent.tokens_per_day ?? null,
  callsPerQuery: sent.calls_per_query ?? null,
});

/** Who a budget holds: a user's or project's name, or a token's id. */
export const llmBudgetSubject = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .refine((s) => !s.includes('\u0000') && !hasLoneSurrogate(s), 'must not hold NUL or lone surrogates');

const llmBudgetScope = z.enum(LLM_BUDGET_SCOPES, { error: 'must be user, token or project' });

export const llmBudgetParams = z.object({ scope: llmBudgetScope, subject: llmBudgetSubject });

export const llmBudgetSchema = z.object({
  scope: llmBudgetScope,
  subject: z.string(),
  calls_per_day: z.number().nullable(),
  tokens_per_day: z.number().nullable(),
  calls_per_query: z.number().nullable(),
  calls_today: z.number().optional(),
  tokens_today: z.number().optional(),
  set_at: z.string(),
});
