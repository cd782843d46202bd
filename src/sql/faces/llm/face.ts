import { planLlmFunction, treeCallsLlm } from './llmFunction';

/**
 * `LLM(prompt)` as a function face: what a query calls rather than reads from. The planner asks
 * whether a statement calls it, and plans its prompts; the run asks them before the query reads
 * (src/sql/pipeline/select.ts). Another SQL function that calls out would be a face beside it.
 */
export const llmFunctionFace = {
  kind: 'llm',
  calledIn: treeCallsLlm,
  plan: planLlmFunction,
} as const;
