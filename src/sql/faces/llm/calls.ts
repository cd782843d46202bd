import {
  BOOLEAN,
  INTEGER,
  LIST,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { LlmFunctionAnswer, LlmFunctionAsk, LlmFunctionKind } from '../../../engines/llm/functionAsk';
import {
  callsFunction,
  eachNode,
  isNode,
  nodeAt,
  nodesAt,
  parseSelect,
  printSelect,
  replaceableConjuncts,
  requiredNodeAt,
  requiredNodesAt,
  type AstNode,
} from '../../pipeline/ast';
import { SqlError, SqlErrorCode } from '../../errors';

/**
 * The machinery the LLM functions share (`LLM()`, LLM_FILTER, LLM_REDUCE, LLM_RERANK: ./face.ts).
 * DuckDB cannot wait for a provider inside a query, so a query calling one runs in passes: first a
 * query of the distinct inputs its calls would ask (each call read as its input, a text key), then,
 * once every input is answered, the query itself, each call looking its answer up by its input in
 * a map held in a variable of the connection. Each function is planned in turn on the statement
 * the previous ones rewrote, so a later function's first pass reads the earlier ones' answers
 * (LLM_FILTER's rows are filtered before LLM() or LLM_RERANK asks about them).
 */

/** Where in the outer SELECT a function's calls are answered. */
type CallPlace = 'columns' | 'where' | 'orderBy';

/**
 * What the first pass reads. `grouped`: the statement itself (its GROUP BY, ORDER BY and LIMIT
 * kept: `LIMIT 10` asks ten prompts); `rows`: the rows of its FROM and WHERE, without what the
 * function decides (a filter, an order, a limit over the ranking).
 */
type FirstPass = 'grouped' | 'rows';

/** One LLM function, as the planner needs it. */
export type LlmFunctionSpec = {
  readonly kind: LlmFunctionKind;
  /** Its SQL name, lower case. */
  readonly name: string;
  readonly places: readonly CallPlace[];
  readonly firstPass: FirstPass;
  /** The refusal of a call outside its places. */
  readonly misplaced: string;
  /** Checks a call's arguments (throws the refusal); answers the names of its column arguments. */
  checkArguments(args: readonly AstNode[], call: AstNode): readonly string[];
  /** The call's input: a VARCHAR expression of its arguments (`call` is its index in the plan). */
  input(c: DuckDBConnection, args: AstNode[], call: number): Promise<AstNode>;
};

/** One function's plan: the query of its distinct inputs, and where its answers go. */
export type LlmCallsPlan = {
  readonly kind: LlmFunctionKind;
  /** DuckDB's text of the query of the distinct inputs (one VARCHAR column), parameters bound at run. */
  readonly inputsSql: string;
  /** The connection variable holding the answers by input. */
  readonly variable: string;
  /** The names of each call's column arguments, by call (LLM_FILTER, LLM_REDUCE, LLM_RERANK). */
  readonly columns: readonly (readonly string[])[];
};

/** Distinct inputs one function of one query may have at most (LLM_SQL_MAX_CALLS bounds the calls below it). */
const MAX_INPUTS = 10_000;
/** A prompt (first argument) of LLM_FILTER, LLM_REDUCE or LLM_RERANK holds at most this many characters. */
const MAX_PROMPT_CHARS = 8_000;
/** A column value they read holds at most this many characters. */
const MAX_VALUE_CHARS = 100_000;

const SQL_NAMES: Record<LlmFunctionKind, string> = {
  llm: 'LLM()',
  filter: 'LLM_FILTER',
  reduce: 'LLM_REDUCE',
  rerank: 'LLM_RERANK',
};

/**
 * How many calls of `names` the tree holds. Synchronous, with no awaits: every query is asked, and
 * a statement at SQL_MAX_QUERY_BYTES is a tree of hundreds of thousands of nodes.
 */
export const countCalls = (node: unknown, names: ReadonlySet<string>): number => {
  let count = 0;
  eachNode(node, (n) => {
    if (callsFunction(n, names)) count++;
  });
  return count;
};

/** A call in the tree, with what puts another node in its place. */
type PlacedCall = { node: AstNode; replace: (by: AstNode) => void };

/**
 * The calls of `names` in `root` (put in its place by `replaceRoot`), in tree order. A call's
 * arguments are not searched (a call nested in another is refused by the caller); a subquery is a
 * query of its own.
 */
const callsUnder = (
  root: unknown,
  replaceRoot: (by: AstNode) => void,
  names: ReadonlySet<string>,
): PlacedCall[] => {
  const calls: PlacedCall[] = [];
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
    if (callsFunction(value, names)) {
      calls.push({ node: value, replace });
      return;
    }
    if (value.class === 'SUBQUERY') return;
    for (const [key, child] of Object.entries(value))
      visit(child, (by) => {
        value[key] = by;
      });
  };
  visit(root, replaceRoot);
  return calls;
};

/** The calls of `spec` in the outer SELECT's places it is answered in, in tree order. */
const callsInPlaces = (select: AstNode | undefined, spec: LlmFunctionSpec): PlacedCall[] => {
  if (select?.type !== 'SELECT_NODE') return [];
  const names = new Set([spec.name]);
  return spec.places.flatMap((place) => {
    switch (place) {
      case 'columns':
        return callsUnder(select.select_list, (by) => (select.select_list = by), names);
      case 'where':
        return callsUnder(select.where_clause, (by) => (select.where_clause = by), names);
      case 'orderBy':
        return nodesAt(select, 'modifiers')
          .filter((m) => m.type === 'ORDER_MODIFIER')
          .flatMap((m) => callsUnder(m.orders, (by) => (m.orders = by), names));
      default: {
        const _exhaustive: never = place;
        return _exhaustive;
      }
    }
  });
};

const templates = new Map<string, AstNode>();
/** The expression `sql` (constant text of ours), parsed once. */
const expression = async (c: DuckDBConnection, sql: string): Promise<AstNode> => {
  let parsed = templates.get(sql);
  if (!parsed) {
    parsed = requiredNodesAt(
      requiredNodeAt(await parseSelect(c, `SELECT ${sql}`), 'node'),
      'select_list',
    )[0]!;
    templates.set(sql, parsed);
  }
  return structuredClone(parsed);
};

const isNullCast = (n: AstNode) =>
  n.class === 'CAST' &&
  isNode(n.child) &&
  n.child.class === 'CONSTANT' &&
  nodeAt(n.child, 'value')?.is_null === true;

/**
 * An expression made from a template whose `CAST(NULL AS VARCHAR)`s are filled, in order, with
 * `args` (each then read as text). The template is constant text of ours; the arguments are nodes.
 */
export const filledTemplate = async (
  c: DuckDBConnection,
  sql: string,
  args: readonly AstNode[],
): Promise<AstNode> => {
  const node = await expression(c, sql);
  const holes: AstNode[] = [];
  const visit = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isNode(value)) return;
    if (isNullCast(value)) holes.push(value);
    else Object.values(value).forEach(visit);
  };
  visit(node);
  // Our own templates: a mismatch is a bug here, not a client's error.
  if (holes.length !== args.length)
    throw new Error(`template ${sql}: ${holes.length} holes for ${args.length}`);
  holes.forEach((hole, i) => (hole.child = args[i]));
  return node;
};

/** `CAST(NULL AS VARCHAR) ×n`, the holes of a template. */
export const holes = (n: number) => Array.from({ length: n }, () => 'CAST(NULL AS VARCHAR)').join(', ');

/** The names a call's column arguments give their values (a column's name, else `value<k>`), unique. */
const columnNames = (args: readonly AstNode[]): string[] => {
  const seen = new Map<string, number>();
  return args.map((arg, k) => {
    const names = Array.isArray(arg.column_names) ? arg.column_names : [];
    const base = arg.alias
      ? String(arg.alias)
      : names.length
        ? String(names[names.length - 1])
        : `value${k + 1}`;
    const times = (seen.get(base) ?? 0) + 1;
    seen.set(base, times);
    return times === 1 ? base : `${base}_${times}`;
  });
};

/** The arguments of a call: at least a prompt and one column, with no DISTINCT, FILTER or ORDER BY of an aggregate. */
export const promptAndColumns = (kind: LlmFunctionKind, args: readonly AstNode[], call: AstNode) => {
  const name = SQL_NAMES[kind];
  const ordered = nodesAt(nodeAt(call, 'order_bys'), 'orders').length > 0;
  if (args.length < 2 || call.distinct || call.filter || ordered)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `${name} takes a prompt (text) and one or more columns: ${name}('prompt', column, …)`,
    );
  return columnNames(args.slice(1));
};

/**
 * The first pass of `spec` (its FirstPass), each call's input a column. `rows`: the query's FROM
 * and WHERE (with the conditions holding one of its calls left out: what they filter is not known
 * yet); `grouped`: the statement, each call NULL.
 */
const firstPass = async (
  c: DuckDBConnection,
  statement: AstNode,
  inputs: AstNode[],
  spec: LlmFunctionSpec,
) => {
  const pass = structuredClone(statement);
  const select = requiredNodeAt(pass, 'node');
  const columns = () => inputs.map((input, i) => ({ ...input, alias: `__mindledger_input_${i}` }));
  if (spec.firstPass === 'grouped') {
    // The same places in the clone: found again by walking it in the same order.
    for (const place of callsInPlaces(select, spec))
      place.replace({ ...(await expression(c, 'CAST(NULL AS VARCHAR)')), alias: place.node.alias ?? '' });
    requiredNodesAt(select, 'select_list').push(...columns());
    return printSelect(c, pass);
  }
  const always = await expression(c, 'true');
  for (const conjunct of replaceableConjuncts(
    nodeAt(select, 'where_clause'),
    (by) => (select.where_clause = by),
  ))
    if (countCalls(conjunct.condition, new Set([spec.name])) > 0) conjunct.replace(structuredClone(always));
  select.select_list = columns();
  select.group_expressions = [];
  select.group_sets = [];
  select.aggregate_handling = 'STANDARD_HANDLING';
  select.having = null;
  select.qualify = null;
  pass.node = { ...select, modifiers: [] };
  return printSelect(c, pass);
};

/**
 * Rewrites `statement` in place to read the answers of `spec`'s calls from the connection's map,
 * and answers the plan of its inputs; null when it has no call of `spec`.
 */
export const planCalls = async (
  c: DuckDBConnection,
  statement: AstNode,
  spec: LlmFunctionSpec,
  allNames: ReadonlySet<string>,
): Promise<LlmCallsPlan | null> => {
  const total = countCalls(statement, new Set([spec.name]));
  if (total === 0) return null;
  const select = nodeAt(statement, 'node');
  const calls = callsInPlaces(select, spec);
  if (calls.length !== total) throw new SqlError(SqlErrorCode.Invalid, spec.misplaced);
  const columns: (readonly string[])[] = [];
  const inputs: AstNode[] = [];
  for (const [i, call] of calls.entries()) {
    const args = requiredNodesAt(call.node, 'children');
    columns.push(spec.checkArguments(args, call.node));
    if (countCalls(args, allNames) > 0)
      throw new SqlError(
        SqlErrorCode.Invalid,
        spec.kind === 'llm'
          ? 'LLM() in an LLM() prompt: ask the inner one first'
          : `An LLM function in an argument of ${SQL_NAMES[spec.kind]}: ask the inner one first, in a subquery`,
      );
    inputs.push(await spec.input(c, structuredClone(args), i));
  }
  const pass = await firstPass(c, statement, inputs, spec);
  const names = inputs.map((_, i) => `"__mindledger_input_${i}"`).join(', ');
  const inputsSql = `SELECT DISTINCT __k FROM (SELECT unnest([${names}]) AS __k FROM (${pass}) AS __mindledger_inputs) WHERE __k IS NOT NULL LIMIT ${MAX_INPUTS + 1}`;
  // The statement itself: each call looks its answer up (its column keeps the name MySQL gives it).
  const variable = `__mindledger_llm_${spec.kind}`;
  for (const [i, call] of calls.entries()) {
    const lookup = await expression(c, `map_extract_value(getvariable('${variable}'), NULL)`);
    requiredNodesAt(lookup, 'children')[1] = inputs[i]!;
    lookup.alias = String(call.node.alias ?? '');
    call.replace(lookup);
  }
  return { kind: spec.kind, inputsSql, variable, columns };
};

/**
 * A text argument that cannot be sent (NUL, a lone surrogate, too long): the refusal naming it. A
 * lone surrogate in a statement's text reaches DuckDB as U+FFFD (its reader replaces it, as it does
 * bytes that are not UTF-8): a prompt holding one is refused too, since the instruction the client
 * wrote is not the one that would be sent; a column's value may hold U+FFFD as data.
 */
const refusalOf = (text: string, max: number, prompt: boolean) =>
  text.includes('\u0000')
    ? 'holds a NUL character'
    : /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)
      ? 'holds a lone surrogate (not Unicode text)'
      : prompt && text.includes('\ufffd')
        ? 'holds U+FFFD (a lone surrogate or bytes that are not UTF-8, replaced when the statement was read)'
        : text.length > max
          ? `is ${text.length} characters long, past ${max}`
          : null;

const checkText = (kind: LlmFunctionKind, text: string | null, argument: number, name: string) => {
  if (text === null) return;
  const prompt = argument === 1;
  const refusal = refusalOf(text, prompt ? MAX_PROMPT_CHARS : MAX_VALUE_CHARS, prompt);
  if (refusal)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `${SQL_NAMES[kind]}: its argument ${argument} (${name}) ${refusal}`,
    );
};

type Input = { c: number; p: string | null; v?: (string | null)[]; rows?: (string | null)[][] };

/** An input's values by their columns' names, each checked. */
const contextOf = (kind: LlmFunctionKind, names: readonly string[], values: readonly (string | null)[]) => {
  names.forEach((name, k) => checkText(kind, values[k] ?? null, k + 2, JSON.stringify(name)));
  return Object.fromEntries(names.map((name, k) => [name, values[k] ?? null]));
};

/**
 * The plan's inputs as the LLM calls service asks them: for LLM(), the prompts; for the others,
 * each input's prompt and values (by name), checked. `asked[i]` is the input's position in the
 * ask, or -1 for an input with a NULL prompt (no call, a NULL answer).
 */
const askOf = (plan: LlmCallsPlan, keys: readonly string[]): { ask: LlmFunctionAsk; asked: number[] } => {
  const { kind } = plan;
  if (kind === 'llm') return { ask: { kind, items: keys }, asked: keys.map((_, i) => i) };
  const inputs = keys.map((key) => JSON.parse(key) as Input);
  const asked: number[] = [];
  let n = 0;
  for (const input of inputs) {
    checkText(kind, input.p, 1, 'the prompt');
    asked.push(input.p === null ? -1 : n++);
  }
  const live = inputs.filter((input): input is Input & { p: string } => input.p !== null);
  const names = (input: Input) => plan.columns[input.c] ?? [];
  switch (kind) {
    case 'filter':
    case 'rerank':
      return {
        ask: {
          kind,
          items: live.map((i) => ({ prompt: i.p, context: contextOf(kind, names(i), i.v ?? []) })),
        },
        asked,
      };
    case 'reduce':
      return {
        ask: {
          kind,
          items: live.map((i) => ({
            prompt: i.p,
            rows: (i.rows ?? []).map((row) => contextOf(kind, names(i), row)),
          })),
        },
        asked,
      };
    default: {
      const _exhaustive: never = kind;
      return _exhaustive;
    }
  }
};

const ANSWER_TYPES: Record<LlmFunctionKind, DuckDBType> = {
  llm: VARCHAR,
  filter: BOOLEAN,
  reduce: VARCHAR,
  rerank: INTEGER,
};

/** Asks one ask of the LLM calls service (the query's budget shared by its functions). */
export type AskLlm = (ask: LlmFunctionAsk) => Promise<readonly LlmFunctionAnswer[]>;

/**
 * Before the query reads: a plan's inputs read (first pass), answered by `ask`, and put in the
 * connection's map. Returns what clears the map afterwards.
 */
export const answerPlannedCalls = async (
  c: DuckDBConnection,
  plan: LlmCallsPlan,
  bound: { values: Record<string, DuckDBValue>; types: Record<string, DuckDBType> },
  ask: AskLlm,
) => {
  const hasValues = Object.keys(bound.values).length > 0;
  const reader = hasValues
    ? await c.runAndReadAll(plan.inputsSql, bound.values, bound.types)
    : await c.runAndReadAll(plan.inputsSql);
  const keys = reader.getRowsJson().map((r) => String(r[0]));
  if (keys.length > MAX_INPUTS)
    throw new SqlError(
      SqlErrorCode.TooLarge,
      `${SQL_NAMES[plan.kind]} would be asked more than ${MAX_INPUTS} distinct inputs by one query: add a LIMIT, or filter the rows`,
    );
  const { ask: asking, asked } = askOf(plan, keys);
  const answers = asking.items.length ? await ask(asking) : [];
  const prepared = await c.prepare(`SET VARIABLE ${plan.variable} = MAP($1, $2)`);
  prepared.bindList(1, keys, LIST(VARCHAR));
  prepared.bindList(
    2,
    asked.map((k) => (k < 0 ? null : (answers[k] ?? null))),
    LIST(ANSWER_TYPES[plan.kind]),
  );
  await prepared.run();
  return () => c.run(`RESET VARIABLE ${plan.variable}`).then(() => undefined);
};
