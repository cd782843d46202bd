import type { AgentTool, ToolKind } from './tools';

const DEFAULT_PROMPT_TEMPLATE =
  "You are a helpful assistant. Answer the user's questions using the data you can reach with your tools.";

/**
 * MindsDB prompt templates carry `{{column}}` placeholders filled from the question's row
 * (`{{question}}` most often). Unknown placeholders stay as written.
 */
export const renderPromptTemplate = (template: string, row: Readonly<Record<string, unknown>>) =>
  template.replace(/\{\{\s*([A-Za-z_][\w.]*)\s*\}\}/g, (whole, key: string) => {
    const value = row[key];
    if (value === undefined || value === null) return whole;
    return typeof value === 'string' ? value : JSON.stringify(value);
  });

const namesOf = (tools: readonly AgentTool[], kind: ToolKind) =>
  tools
    .filter((t) => t.kind === kind)
    .map((t) => `\`${t.name}\``)
    .join(' / ');

/** Short rules for the tools the agent actually has, naming them as the model sees them. */
const toolRules = (tools: readonly AgentTool[]): string => {
  if (!tools.length) return '';
  const rules = [
    'Answer from what the tools return, not from memory; if the data does not hold the answer, say so.',
  ];
  if (tools.some((t) => t.kind === 'sql_query'))
    rules.push(
      `For questions about data in tables: find the tables with ${namesOf(tools, 'sql_list_tables')}, read their columns and sample rows with ${namesOf(tools, 'sql_schema')}, then run one read-only query at a time with ${namesOf(tools, 'sql_query')}.`,
    );
  if (tools.some((t) => t.kind === 'kb_query'))
    rules.push(
      `For questions about documents: search with ${namesOf(tools, 'kb_query')}, passing the user's question as the query.`,
    );
  rules.push(
    'If a tool answers {"error": …}, read the error, fix the call and try again.',
    'When you have the answer, reply in plain prose without calling a tool: concise, with the figures you found.',
  );
  return `How to use your tools:\n${rules.map((r) => `- ${r}`).join('\n')}`;
};

/** The agent's prompt template (MindsDB's system prompt), then the tool rules. */
export const buildSystemPrompt = (input: {
  readonly promptTemplate?: string | null;
  readonly tools: readonly AgentTool[];
  /** The question's row, for `{{column}}` placeholders. */
  readonly row?: Readonly<Record<string, unknown>>;
}): string => {
  const template = input.promptTemplate?.trim() ? input.promptTemplate : DEFAULT_PROMPT_TEMPLATE;
  const rendered = renderPromptTemplate(template, input.row ?? {});
  const rules = toolRules(input.tools);
  return rules ? `${rendered.trim()}\n\n${rules}` : rendered.trim();
};
