import { planToMarkdown, treeCallsToMarkdown } from './toMarkdown';

/**
 * `TO_MARKDOWN(document)` as a function face, beside `LLM()`: the planner finds its documents and
 * puts variables in the calls' places; the run converts the documents before the query reads
 * (src/sql/pipeline/select.ts).
 */
export const markdownFunctionFace = {
  kind: 'to_markdown',
  calledIn: treeCallsToMarkdown,
  plan: planToMarkdown,
} as const;
