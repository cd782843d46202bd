import type { DuckDBConnection } from '@duckdb/node-api';
import type { AstNode } from '../../pipeline/ast';
import { countCalls, planCalls, type LlmCallsPlan } from './calls';
import { llmCall, llmFilterCall, llmReduceCall, llmRerankCall } from './llmFunction';

/**
 * The LLM functions as one function face: what a query calls rather than reads from. The planner
 * asks whether a statement calls any, and plans each function's inputs, in this order: LLM_FILTER
 * first (what it filters out is asked nothing by the others), then LLM_RERANK, LLM_REDUCE and
 * LLM(). The run asks each plan's inputs before the query reads (src/sql/pipeline/select.ts).
 */
const LLM_FUNCTIONS = [llmFilterCall, llmRerankCall, llmReduceCall, llmCall] as const;
const NAMES: ReadonlySet<string> = new Set(LLM_FUNCTIONS.map((f) => f.name));

export const llmFunctionFace = {
  kind: 'llm',
  /** Whether the statement calls an LLM function anywhere. */
  calledIn: (statement: AstNode) => countCalls(statement, NAMES) > 0,
  /** Rewrites `statement` in place to read the answers; the plans of the functions it calls, in order. */
  plan: async (c: DuckDBConnection, statement: AstNode): Promise<LlmCallsPlan[]> => {
    const plans: LlmCallsPlan[] = [];
    // One walk for the statement that calls none (nearly all): each function's plan walks again.
    if (countCalls(statement, NAMES) === 0) return plans;
    for (const spec of LLM_FUNCTIONS) {
      const plan = await planCalls(c, statement, spec, NAMES);
      if (plan) plans.push(plan);
    }
    return plans;
  },
} as const;
