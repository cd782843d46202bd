import { LIST, VARCHAR, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import {
  isNode,
  nodeAt,
  parseSelect,
  printSelect,
  requiredNodeAt,
  requiredNodesAt,
  walk,
  type AstNode,
} from '../../pipeline/ast';
import { SqlError, SqlErrorCode } from '../../errors';

/**
 * MindsDB's `LLM(prompt)` in a SELECT's column list (`SELECT id, LLM('Summarize: ' || text) FROM t`):
 * DuckDB cannot wait for a provider inside a query, so the query runs twice. First a query of the
 * prompts (the same FROM, WHERE, GROUP BY, ORDER BY and LIMIT, each `LLM(x)` read as its prompt x);
 * then, once each distinct prompt is answered, the query itself, each `LLM(x)` looking its answer
 * up by x in a map held in a variable of the connection.
 */
export type LlmFunctionPlan = {
  /** The distinct prompts the query asks (DuckDB's dialect, the statement's parameters bound). */
  readonly promptsSql: string;
};

/** The connection variable holding the answers, by prompt, while the query reads them. */
const ANSWERS = '__mindledger_llm_answers';
/** Distinct prompts one query may have at most (LLM_SQL_MAX_CALLS bounds the calls below it). */
const MAX_PROMPTS = 10_000;

const isLlmCall = (n: AstNode) =>
  n.class === 'FUNCTION' && String(n.function_name).toLowerCase() === 'llm' && !n.schema && !n.catalog;

/** The first item of a parsed template's column list. */
const firstSelected = (template: AstNode) =>
  requiredNodesAt(requiredNodeAt(template, 'node'), 'select_list')[0]!;

let lookupTemplate: AstNode | undefined;
/** `map_extract_value(getvariable('…'), CAST(<prompt> AS VARCHAR))`, with <prompt> to fill in. */
const lookupNode = async (c: DuckDBConnection, prompt: AstNode): Promise<AstNode> => {
  lookupTemplate ??= firstSelected(
    await parseSelect(c, `SELECT map_extract_value(getvariable('${ANSWERS}'), CAST(NULL AS VARCHAR))`),
  );
  const node = structuredClone(lookupTemplate);
  const cast = requiredNodesAt(node, 'children')[1]!;
  cast.child = prompt;
  return node;
};

let castTemplate: AstNode | undefined;
/** `CAST(<expression> AS VARCHAR)`. */
const asText = async (c: DuckDBConnection, expression: AstNode | null, alias: string): Promise<AstNode> => {
  castTemplate ??= firstSelected(await parseSelect(c, 'SELECT CAST(NULL AS VARCHAR)'));
  const node = structuredClone(castTemplate);
  if (expression) node.child = expression;
  node.alias = alias;
  return node;
};

/**
 * How many `LLM()` calls the tree holds. Synchronous, with no awaits: every query is asked, and a
 * statement at SQL_MAX_QUERY_BYTES is a tree of hundreds of thousands of nodes.
 */
const countLlmCalls = (node: unknown): number => {
  if (Array.isArray(node)) return node.reduce((sum: number, child) => sum + countLlmCalls(child), 0);
  if (!isNode(node)) return 0;
  let count = isLlmCall(node) ? 1 : 0;
  for (const value of Object.values(node)) count += countLlmCalls(value);
  return count;
};

/** An `LLM()` call of a column list, with what puts another node in its place. */
type LlmCallPlace = { node: AstNode; replace: (by: AstNode) => void };

/**
 * The `LLM()` calls of a column list, in tree order. A call's arguments are not searched (a call
 * nested in another is counted, and refused, by the caller); a subquery in the column list is a
 * query of its own: its LLM() is not this one's.
 */
const llmCallsIn = (list: AstNode[]): LlmCallPlace[] => {
  const calls: LlmCallPlace[] = [];
  const visit = (value: unknown, replace: (by: AstNode) => void) => {
    if (Array.isArray(value)) {
      value.forEach((child, i) =>
        visit(child, (by) => {
          value[i] = by;
        }),
      );
      return;
    }
    if (!isNode(value)) return;
    if (isLlmCall(value)) {
      calls.push({ node: value, replace });
      return;
    }
    if (value.class === 'SUBQUERY') return;
    for (const [key, child] of Object.entries(value))
      visit(child, (by) => {
        value[key] = by;
      });
  };
  list.forEach((item, i) =>
    visit(item, (by) => {
      list[i] = by;
    }),
  );
  return calls;
};

/** Whether the statement calls `LLM()` anywhere. */
export const treeCallsLlm = (statement: AstNode) => countLlmCalls(statement) > 0;

/**
 * Rewrites `statement` in place to read its `LLM(x)` answers from the connection's map, and
 * answers the query of its prompts; null when it calls no `LLM()`.
 */
export const planLlmFunction = async (
  c: DuckDBConnection,
  statement: AstNode,
): Promise<LlmFunctionPlan | null> => {
  const total = countLlmCalls(statement);
  if (total === 0) return null;
  const select = nodeAt(statement, 'node');
  const list = select?.type === 'SELECT_NODE' ? requiredNodesAt(select, 'select_list') : undefined;
  // The calls of the outer SELECT's column list (their arguments searched too: nesting is refused).
  const calls = list ? llmCallsIn(list) : [];
  if (calls.length !== total)
    throw new SqlError(
      SqlErrorCode.Invalid,
      "LLM() is answered in the outer SELECT's column list only (not in WHERE, ORDER BY, a subquery or a UNION): select it there, or read the rows in a subquery first",
    );
  for (const call of calls) {
    const args = requiredNodesAt(call.node, 'children');
    if (args.length !== 1 || call.node.distinct || call.node.filter)
      throw new SqlError(SqlErrorCode.Invalid, 'LLM() takes one argument: the prompt (text)');
    let nested = false;
    await walk(args[0], (n) => {
      if (isLlmCall(n)) nested = true;
    });
    if (nested) throw new SqlError(SqlErrorCode.Invalid, 'LLM() in an LLM() prompt: ask the inner one first');
  }
  // First pass: the statement's rows with each LLM(x) as NULL, and each prompt x as a column.
  const prompts = structuredClone(statement);
  const promptList = requiredNodesAt(requiredNodeAt(prompts, 'node'), 'select_list');
  const firstPass = structuredClone(calls.map((call) => requiredNodesAt(call.node, 'children')[0]!));
  // The same places in the clone: found again by walking it in the same order.
  for (const place of llmCallsIn(promptList))
    place.replace(await asText(c, null, String(place.node.alias ?? '')));
  for (const [i, prompt] of firstPass.entries())
    promptList.push(await asText(c, prompt, `__mindledger_prompt_${i}`));
  const columns = firstPass.map((_, i) => `"__mindledger_prompt_${i}"`).join(', ');
  const promptsSql = `SELECT DISTINCT __p FROM (SELECT unnest([${columns}]) AS __p FROM (${await printSelect(
    c,
    prompts,
  )}) AS __mindledger_prompts) WHERE __p IS NOT NULL LIMIT ${MAX_PROMPTS + 1}`;
  // The statement itself: each LLM(x) looks its answer up (its column keeps the name MySQL gives it).
  for (const call of calls) {
    const lookup = await lookupNode(c, requiredNodesAt(call.node, 'children')[0]!);
    lookup.alias = String(call.node.alias ?? '');
    call.replace(lookup);
  }
  return { promptsSql };
};

/**
 * Before the query reads: its prompts read (first pass), answered by `ask`, and put in the
 * connection's map. Returns what clears the map afterwards.
 */
export const answerLlmCalls = async (
  c: DuckDBConnection,
  plan: LlmFunctionPlan,
  bound: { values: Record<string, DuckDBValue>; types: Record<string, DuckDBType> },
  ask: (prompts: string[]) => Promise<(string | null)[]>,
) => {
  const hasValues = Object.keys(bound.values).length > 0;
  const reader = hasValues
    ? await c.runAndReadAll(plan.promptsSql, bound.values, bound.types)
    : await c.runAndReadAll(plan.promptsSql);
  const prompts = reader.getRowsJson().map((r) => String(r[0]));
  if (prompts.length > MAX_PROMPTS)
    throw new SqlError(
      SqlErrorCode.TooLarge,
      `LLM() would be asked more than ${MAX_PROMPTS} distinct prompts by one query: add a LIMIT, or filter the rows`,
    );
  const answers = prompts.length ? await ask(prompts) : [];
  const prepared = await c.prepare(`SET VARIABLE ${ANSWERS} = MAP($1, $2)`);
  prepared.bindList(1, prompts, LIST(VARCHAR));
  prepared.bindList(2, answers, LIST(VARCHAR));
  await prepared.run();
  return () => c.run(`RESET VARIABLE ${ANSWERS}`).then(() => undefined);
};
