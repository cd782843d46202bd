import type { z } from 'zod';
import { invalid } from '../shared/errors';
import { ok, type SqlCatalog, type StatementHandlers } from '../sql/handlers';
import { budgetsWithSpending } from './projection';
import { limitsOf, llmBudgetLimits, llmBudgetSubject } from './schemas';
import type { LlmBudgetsService } from './service';

/** A value the statement gave that its schema refuses, as the statement's error naming the option. */
const checked = <S extends z.ZodType>(statement: string, schema: S, value: unknown): z.infer<S> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalid(
    `${statement}: ${result.error.issues
      .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
      .join('; ')}`,
  );
};

/** CREATE [OR REPLACE] LLM_BUDGET and DROP LLM_BUDGET, through the budgets service (as REST). */
export const llmBudgetStatements = (budgets: Pick<LlmBudgetsService, 'set' | 'drop'>) =>
  ({
    CreateLlmBudget: async (statement) => {
      const subject = checked('CREATE LLM_BUDGET', llmBudgetSubject, statement.subject);
      const limits = checked('CREATE LLM_BUDGET', llmBudgetLimits, statement.options);
      await budgets.set(statement.scope, subject, limitsOf(limits));
      return ok;
    },
    DropLlmBudget: async (statement) => {
      const subject = checked('DROP LLM_BUDGET', llmBudgetSubject, statement.subject);
      await budgets.drop(statement.scope, subject, statement.ifExists);
      return ok;
    },
  }) satisfies StatementHandlers<'CreateLlmBudget' | 'DropLlmBudget'>;

/**
 * information_schema.LLM_BUDGETS: every budget, its limits and what was spent under it today (UTC:
 * calls made, their tokens), from the recorded calls (information_schema.LLM_CALLS).
 */
export const llmBudgetCatalog = {
  informationSchema: {
    LLM_BUDGETS: `SELECT SCOPE, SUBJECT, CALLS_PER_DAY, CALLS_TODAY, TOKENS_PER_DAY, TOKENS_TODAY, CALLS_PER_QUERY, SET_AT
      FROM (${budgetsWithSpending("CAST(CAST(now() AT TIME ZONE 'UTC' AS DATE) AS TIMESTAMP)")}) ORDER BY SCOPE, SUBJECT`,
  },
} satisfies SqlCatalog;
