/**
 * The budgets' rules, data in and data out: a budget sets one limit at least and replaces the one
 * before; dropping names an existing budget (users and projects case-blind, tokens exactly); the
 * table holds one row per budget in force.
 */
import type { LlmBudgetSet, MindledgerEvent } from '../../events';
import { decideLlmBudget, type LlmBudgetCommand } from '../../src/llmBudgets/decider';
import { llmBudgetsAggregate } from '../../src/llmBudgets/state';
import type { Stamped } from '../../src/projectCommand';
import { deciderSpec } from '../support/decider';
import { projected } from '../support/projection';

const now = new Date('2026-03-01T10:00:00.000Z');
const at = now.toISOString();
const spec = deciderSpec<ReturnType<typeof llmBudgetsAggregate.initialState>, Stamped<LlmBudgetCommand>>({
  ...llmBudgetsAggregate,
  decide: decideLlmBudget,
});
const limits = { callsPerDay: null, tokensPerDay: null, callsPerQuery: null };
const setBudget = (
  data: Partial<LlmBudgetSet['data']> & Pick<LlmBudgetSet['data'], 'scope' | 'subject'>,
): LlmBudgetSet => ({
  type: 'LlmBudgetSet',
  data: { ...limits, setAt: at, ...data },
});
const command = (c: LlmBudgetCommand): Stamped<LlmBudgetCommand> => ({ ...c, metadata: { now } });

describe('LLM budgets: the decider', () => {
  it('sets a budget with its limits, the one set before replaced', () =>
    spec
      .given([setBudget({ scope: 'user', subject: 'alice', callsPerDay: 5 })])
      .when(
        command({
          type: 'SetLlmBudget',
          data: { scope: 'user', subject: 'alice', ...limits, tokensPerDay: 900 },
        }),
      )
      .then([setBudget({ scope: 'user', subject: 'alice', tokensPerDay: 900 })]));

  it('refuses a budget that sets no limit, naming the three', () =>
    spec
      .given([])
      .when(command({ type: 'SetLlmBudget', data: { scope: 'project', subject: 'p', ...limits } }))
      .thenThrows('Invalid', /calls_per_day, tokens_per_day or calls_per_query/));

  it('drops a user budget by any case of its name, keeping the name it was set with', () =>
    spec
      .given([setBudget({ scope: 'user', subject: 'Alice', callsPerDay: 5 })])
      .when(command({ type: 'DropLlmBudget', data: { scope: 'user', subject: 'ALICE', ifExists: false } }))
      .then([{ type: 'LlmBudgetDropped', data: { scope: 'user', subject: 'Alice', droppedAt: at } }]));

  it('tells token ids apart by case: another case is another token', () =>
    spec
      .given([setBudget({ scope: 'token', subject: 'AbCdEfGhIjKlMnOp', callsPerDay: 1 })])
      .when(
        command({
          type: 'DropLlmBudget',
          data: { scope: 'token', subject: 'abcdefghijklmnop', ifExists: false },
        }),
      )
      .thenThrows('NotFound', /No LLM budget for token abcdefghijklmnop/));

  it('drops nothing, and says nothing, for IF EXISTS of a budget never set', () =>
    spec
      .given([])
      .when(command({ type: 'DropLlmBudget', data: { scope: 'project', subject: 'p', ifExists: true } }))
      .then([]));
});

describe('LLM budgets: the table', () => {
  it('holds one row per budget in force, keyed as the calls name a caller', async () => {
    const events: MindledgerEvent[] = [
      setBudget({ scope: 'user', subject: 'Alice', callsPerDay: 5 }),
      setBudget({ scope: 'token', subject: 'AbCdEfGhIjKlMnOp', callsPerQuery: 2000 }),
      setBudget({ scope: 'project', subject: 'Sales', tokensPerDay: 10 }),
      setBudget({ scope: 'user', subject: 'alice', callsPerDay: 7 }),
      { type: 'LlmBudgetDropped', data: { scope: 'project', subject: 'Sales', droppedAt: at } },
    ];
    const rows = (await projected(events))('llm_budgets');
    expect(rows.map((r) => [r.BUDGET_KEY, r.SUBJECT, r.CALLS_PER_DAY, r.CALLS_PER_QUERY])).toEqual([
      ['user:alice', 'alice', 7n, null],
      ['token:AbCdEfGhIjKlMnOp', 'AbCdEfGhIjKlMnOp', null, 2000n],
    ]);
  });
});
