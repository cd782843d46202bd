import { selectRows } from '../projection/table';
import { deletableTable } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import { budgetKey } from './state';

/** `llm_budgets`: the budgets in force, one row each (information_schema.LLM_BUDGETS adds what was spent). */
export const llmBudgetsTable = deletableTable({
  table: 'llm_budgets',
  key: 'BUDGET_KEY',
  columns: columns(
    /** `user:<name>`, `token:<id>`, `project:<name>` (./state.ts `budgetKey`), as the calls name a caller. */
    'BUDGET_KEY VARCHAR',
    `SCOPE VARCHAR, SUBJECT VARCHAR, CALLS_PER_DAY BIGINT NULL, TOKENS_PER_DAY BIGINT NULL,
    CALLS_PER_QUERY BIGINT NULL, SET_AT TIMESTAMP`,
  ),
  handles: ['LlmBudgetSet', 'LlmBudgetDropped'],
  deletedBy: { type: 'LlmBudgetDropped', key: (e) => budgetKey(e.data.scope, e.data.subject) },
  apply: ({ data: d }, rows) => {
    const limit = (n: number | null) => (n === null ? null : BigInt(n));
    rows.put({
      BUDGET_KEY: budgetKey(d.scope, d.subject),
      SCOPE: d.scope,
      SUBJECT: d.subject,
      CALLS_PER_DAY: limit(d.callsPerDay),
      TOKENS_PER_DAY: limit(d.tokensPerDay),
      CALLS_PER_QUERY: limit(d.callsPerQuery),
      SET_AT: d.setAt,
    });
  },
});

/**
 * Each budget with what was spent under it since `dayStart` (a SQL expression of a TIMESTAMP, UTC):
 * the provider requests made and their tokens, matched to the budget's key as ./state.ts
 * `budgetKey` names a caller. Two kinds of request spend: a query's LLM calls (`llm_calls`; answers
 * from the cache cost nothing) and an agent run's model calls (`agent_steps` of kind `model`, whose
 * caller and project are their run's; runs recorded before budgets held agents name no caller and
 * count for their project only). The one reckoning of spending: information_schema.LLM_BUDGETS and
 * the check before every call.
 */
export const budgetsWithSpending = (dayStart: string) =>
  `SELECT b.SCOPE, b.SUBJECT, b.CALLS_PER_DAY, count(c.AT) AS CALLS_TODAY, b.TOKENS_PER_DAY,
    COALESCE(sum(c.TOTAL_TOKENS), 0) AS TOKENS_TODAY, b.CALLS_PER_QUERY, b.SET_AT, b.BUDGET_KEY
    FROM main.llm_budgets b LEFT JOIN (
      SELECT CALLED_AT AS AT, USER_NAME, ACTOR, PROJECT, TOTAL_TOKENS FROM main.llm_calls
        WHERE NOT CACHED AND CALLED_AT >= ${dayStart}
      UNION ALL
      SELECT s.RECORDED_AT, r.USER_NAME, r.ACTOR, r.PROJECT, s.TOTAL_TOKENS
        FROM main.agent_steps s JOIN main.agent_runs r ON r.TRACE_ID = s.TRACE_ID
        WHERE s.KIND = 'model' AND s.RECORDED_AT >= ${dayStart}
    ) c ON b.BUDGET_KEY = CASE b.SCOPE
        WHEN 'user' THEN 'user:' || lower(c.USER_NAME)
        WHEN 'token' THEN c.ACTOR
        ELSE 'project:' || lower(c.PROJECT) END
    GROUP BY ALL`;

/** What `budgetsWithSpending` answers, read back. */
type SpendingRow = {
  SCOPE: string;
  SUBJECT: string;
  CALLS_PER_DAY: bigint | null;
  CALLS_TODAY: bigint;
  TOKENS_PER_DAY: bigint | null;
  TOKENS_TODAY: bigint | number;
  CALLS_PER_QUERY: bigint | null;
  SET_AT: unknown;
};

/** The budgets of these keys, with their spending since `dayStart`. */
export const spendingOf = async (reader: TableReader, keys: readonly string[], dayStart: Date) => {
  if (keys.length === 0) return [];
  const rows = (await reader.query(
    `SELECT * FROM (${budgetsWithSpending('CAST(? AS TIMESTAMP)')}) WHERE BUDGET_KEY IN (${keys.map(() => '?').join(', ')})`,
    // The day's start, once for each kind of spending.
    [...Array(2).fill(dayStart.toISOString().slice(0, 19).replace('T', ' ')), ...keys],
  )) as SpendingRow[];
  return rows;
};

/** Every budget, in order. */
export const allBudgets = (reader: TableReader) =>
  selectRows(llmBudgetsTable, reader, 'SELECT * FROM llm_budgets ORDER BY SCOPE, SUBJECT');
