import { SqlError, SqlErrorCode } from '../../errors';
import { filledTemplate, holes, promptAndColumns, type LlmFunctionSpec } from './calls';

/**
 * The LLM functions a query may call, each answered through ./calls.ts (the first pass of its
 * inputs, asked in batches by src/llmCalls, looked up by the query). The arguments follow flock's
 * functions (llm_filter, llm_reduce, llm_rerank), flattened into MindsDB's `LLM(prompt)` form: the
 * prompt first, then the columns flock lists in `context_columns`; the model is LLM()'s
 * (LLM_FUNCTION_*), as MindsDB's LLM() has no model argument (docs/llm-models.md).
 */

/**
 * MindsDB's `LLM(prompt)` in a SELECT's column list (`SELECT id, LLM('Summarize: ' || text) FROM t`):
 * its input is its prompt; the first pass is the statement itself (LIMIT 10 asks ten prompts).
 */
export const llmCall: LlmFunctionSpec = {
  kind: 'llm',
  name: 'llm',
  places: ['columns'],
  firstPass: 'grouped',
  misplaced:
    "LLM() is answered in the outer SELECT's column list only (not in WHERE, ORDER BY, a subquery or a UNION): select it there, or read the rows in a subquery first",
  checkArguments: (args, call) => {
    if (args.length !== 1 || call.distinct || call.filter)
      throw new SqlError(SqlErrorCode.Invalid, 'LLM() takes one argument: the prompt (text)');
    return [];
  },
  input: (c, args) => filledTemplate(c, 'CAST(NULL AS VARCHAR)', args),
};

/**
 * A function of a prompt and columns (flock's), named for its kind: its input is
 * `{"c": call, "p": prompt, …}` with what `values` makes of the list of a row's values as text.
 */
const columnsFunction = ({
  values,
  ...spec
}: Pick<LlmFunctionSpec, 'places' | 'firstPass' | 'misplaced'> & {
  kind: 'filter' | 'rerank' | 'reduce';
  values: (row: string) => string;
}): LlmFunctionSpec => ({
  ...spec,
  name: `llm_${spec.kind}`,
  checkArguments: (args, call) => promptAndColumns(spec.kind, args, call),
  input: (c, args, call) =>
    filledTemplate(
      c,
      `CAST(to_json({'c': ${call}, 'p': CAST(NULL AS VARCHAR), ${values(`list_value(${holes(args.length - 1)})`)}}) AS VARCHAR)`,
      args,
    ),
});

/**
 * `LLM_FILTER(prompt, col…)`: whether the row meets the prompt, a boolean, in WHERE (or the column
 * list). The first pass reads the rows the other conditions of WHERE keep.
 */
export const llmFilterCall = columnsFunction({
  kind: 'filter',
  places: ['where', 'columns'],
  firstPass: 'rows',
  misplaced:
    "LLM_FILTER is answered in the outer SELECT's WHERE clause and column list only (not in HAVING, ORDER BY, a subquery or a UNION): filter the rows in a subquery first",
  values: (row) => `'v': ${row}`,
});

/**
 * `LLM_RERANK(prompt, col…)`: the row's rank (1: most relevant to the prompt) among the rows the
 * query reads, for `ORDER BY` (typically over a knowledge base's search). The first pass reads the
 * rows of FROM and WHERE, before any ORDER BY or LIMIT.
 */
export const llmRerankCall = columnsFunction({
  kind: 'rerank',
  places: ['orderBy', 'columns'],
  firstPass: 'rows',
  misplaced:
    "LLM_RERANK is answered in the outer SELECT's ORDER BY and column list only (not in WHERE, a subquery or a UNION): ORDER BY LLM_RERANK('prompt', column)",
  values: (row) => `'v': ${row}`,
});

/**
 * `LLM_REDUCE(prompt, col…)`: one answer per group (the whole table without GROUP BY, as flock's
 * llm_reduce), an aggregate: its input is the group's rows, each a list of its values as text,
 * sorted (the order the rows were read in does not change the prompt).
 */
export const llmReduceCall = columnsFunction({
  kind: 'reduce',
  places: ['columns'],
  firstPass: 'grouped',
  misplaced:
    "LLM_REDUCE is answered in the outer SELECT's column list only (not in WHERE, HAVING, ORDER BY, a subquery or a UNION): select it there, with GROUP BY",
  values: (row) => `'rows': list_sort(list(${row}))`,
});
