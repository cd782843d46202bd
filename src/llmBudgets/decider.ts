import type { LlmBudgetDropped, LlmBudgetScope, LlmBudgetSet } from '../../events';
import type { Stamped } from '../projectCommand';
import { invalid, notFound } from '../shared/errors';
import { decideByType } from '../shared/decision';
import { budgetKey, type LlmBudgetLimits, type LlmBudgetsState } from './state';

export type LlmBudgetCommand =
  | { type: 'SetLlmBudget'; data: LlmBudgetLimits & { scope: LlmBudgetScope; subject: string } }
  | { type: 'DropLlmBudget'; data: { scope: LlmBudgetScope; subject: string; ifExists: boolean } };

/** Set: one limit at least (a budget of none limits nothing); replaces the budget set before. */
const setBudget = (command: Stamped<Extract<LlmBudgetCommand, { type: 'SetLlmBudget' }>>): LlmBudgetSet[] => {
  const { scope, subject, callsPerDay, tokensPerDay, callsPerQuery } = command.data;
  if (callsPerDay === null && tokensPerDay === null && callsPerQuery === null)
    throw invalid(
      `The LLM budget of ${scope} ${subject} sets no limit: give calls_per_day, tokens_per_day or calls_per_query`,
    );
  return [
    {
      type: 'LlmBudgetSet',
      data: {
        scope,
        subject,
        callsPerDay,
        tokensPerDay,
        callsPerQuery,
        setAt: command.metadata.now.toISOString(),
      },
    },
  ];
};

const dropBudget = (
  command: Stamped<Extract<LlmBudgetCommand, { type: 'DropLlmBudget' }>>,
  state: LlmBudgetsState,
): LlmBudgetDropped[] => {
  const { scope, subject, ifExists } = command.data;
  const found = state.budgets.get(budgetKey(scope, subject));
  if (!found) {
    if (ifExists) return [];
    throw notFound(`No LLM budget for ${scope} ${subject}`);
  }
  return [
    {
      type: 'LlmBudgetDropped',
      data: { scope, subject: found.subject, droppedAt: command.metadata.now.toISOString() },
    },
  ];
};

export const decideLlmBudget = decideByType<
  Stamped<LlmBudgetCommand>,
  LlmBudgetsState,
  LlmBudgetSet | LlmBudgetDropped
>({ SetLlmBudget: setBudget, DropLlmBudget: dropBudget });
