/**
 * The contract between the SQL LLM functions (src/sql/faces/llm) and the LLM calls that answer them
 * (src/llmCalls): neither side owns it, so it lives with the LLM engine both use.
 */

/**
 * One SQL query's LLM calls, shared by every function it calls (LLM(), LLM_FILTER, LLM_REDUCE,
 * LLM_RERANK): recorded on one stream, and held together to LLM_SQL_MAX_CALLS.
 */
export type LlmQueryBudget = {
  readonly queryId: string;
  /** Provider requests planned so far by the query's earlier asks. */
  planned: number;
};

/**
 * The LLM functions a SQL query calls, as the SQL side hands them over (src/sql/faces/llm): each
 * ask lists its distinct inputs, and is answered one value per input, in order. `LLM(prompt)` asks
 * its prompts; `LLM_FILTER(prompt, col…)` asks whether each row meets the prompt (a boolean);
 * `LLM_REDUCE(prompt, col…)` asks one answer per group of rows; `LLM_RERANK(prompt, col…)` asks
 * for the rows ranked, answering each row's rank (1: most relevant).
 */

/** One row's values, by the names the function's arguments give them (text, or NULL). */
type ContextRow = Readonly<Record<string, string | null>>;
/** A row of LLM_FILTER or LLM_RERANK: the prompt, and the row's values. */
export type ContextItem = { readonly prompt: string; readonly context: ContextRow };
/** A group of LLM_REDUCE: the prompt, and the group's rows (sorted: their order is not the group's). */
export type GroupItem = { readonly prompt: string; readonly rows: readonly ContextRow[] };

export type LlmFunctionAsk = (
  | { readonly kind: 'llm'; readonly items: readonly string[] }
  | { readonly kind: 'filter'; readonly items: readonly ContextItem[] }
  | { readonly kind: 'reduce'; readonly items: readonly GroupItem[] }
  | { readonly kind: 'rerank'; readonly items: readonly ContextItem[] }
) & {
  /** The query's calls so far (every function of one query is held to one LLM_SQL_MAX_CALLS). */
  readonly budget?: LlmQueryBudget;
};
export type LlmFunctionKind = LlmFunctionAsk['kind'];
/** An input's answer: LLM()'s and LLM_REDUCE's text, LLM_FILTER's boolean, LLM_RERANK's rank. */
export type LlmFunctionAnswer = string | boolean | number | null;
