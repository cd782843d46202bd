import type { DuckDBConnection } from '@duckdb/node-api';
import {
  conjunctsOf,
  constantValue,
  nodeAt,
  nodesAt,
  stringsAt,
  walk,
  type AstNode,
} from '../../pipeline/ast';
import { isVolatileFunction } from '../../pipeline/scope';

/**
 * A batch prediction predicts every row of the other side of its join, then DuckDB filters and
 * limits the paired rows. Conditions of the WHERE clause that read only the input's columns, and a
 * LIMIT that nothing between the join and the answer can change (no ORDER BY, DISTINCT, grouping,
 * aggregates or windows, and every condition on the input), narrow the input before predicting:
 * the answer is the same, the work is what the answer needs. DuckDB still applies the whole WHERE
 * and LIMIT afterwards, so narrowing is only ever an optimisation.
 */
export type InputNarrowing = {
  /** Conjuncts of the WHERE clause over the input's columns only (qualified by its alias). */
  conditions: AstNode[];
  /** Rows the answer can need from the input (LIMIT + OFFSET), or null when it needs them all. */
  limit: number | null;
  /** Every conjunct of the WHERE clause: to tell whether some were left out. */
  conjuncts: number;
};

export const NO_NARROWING: InputNarrowing = { conditions: [], limit: null, conjuncts: 0 };

let aggregateNames: Promise<Set<string>> | undefined;
/** DuckDB's aggregate functions (asked once: its own catalog is the exact list). */
const aggregates = (c: DuckDBConnection) =>
  (aggregateNames ??= c
    .runAndReadAll(
      "SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type = 'aggregate'",
    )
    .then((r) => new Set(r.getRows().map((row) => String(row[0]))))
    .catch((error: unknown) => {
      aggregateNames = undefined;
      throw error;
    }));

/** Whether a condition reads only the input's columns, deterministically, with nothing bound later. */
const readsOnlyInput = async (condition: AstNode, alias: string) => {
  let columns = 0;
  let foreign = false;
  await walk(condition, (n) => {
    if (n.class === 'COLUMN_REF') {
      const names = stringsAt(n, 'column_names');
      if (names.length === 2 && names[0]!.toLowerCase() === alias.toLowerCase()) columns++;
      else foreign = true;
    } else if (n.class === 'SUBQUERY' || n.class === 'PARAMETER' || n.class === 'WINDOW') foreign = true;
    else if (n.class === 'FUNCTION' && isVolatileFunction(String(n.function_name))) foreign = true;
  });
  return columns > 0 && !foreign;
};

const integerConstant = (n: AstNode | null | undefined): number | null => {
  if (!n || n.class !== 'CONSTANT') return null;
  // Read as every constant is (a DECIMAL's value is scaled to a whole number: `2.0` holds 20).
  const value = constantValue(n);
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
};

/** Whether the select list aggregates or windows (then a LIMIT counts groups, not input rows). */
const aggregatesRows = async (c: DuckDBConnection, list: unknown) => {
  const names = await aggregates(c);
  let found = false;
  await walk(list, (n) => {
    if (n.class === 'WINDOW') found = true;
    if (n.class === 'FUNCTION' && names.has(String(n.function_name).toLowerCase())) found = true;
  });
  return found;
};

/**
 * How the input of the join `join` (the query's whole FROM clause) may be narrowed; the input is a
 * single table or subquery called `alias`. Anything else is not narrowed.
 */
export const inputNarrowing = async (
  c: DuckDBConnection,
  statement: AstNode,
  join: AstNode,
  input: AstNode,
  alias: string,
): Promise<InputNarrowing> => {
  const node = nodeAt(statement, 'node');
  if (node?.type !== 'SELECT_NODE' || node.from_table !== join) return NO_NARROWING;
  if (input.type !== 'BASE_TABLE' && input.type !== 'SUBQUERY') return NO_NARROWING;
  const conjuncts = conjunctsOf(nodeAt(node, 'where_clause'));
  const conditions: AstNode[] = [];
  for (const condition of conjuncts) if (await readsOnlyInput(condition, alias)) conditions.push(condition);
  const modifiers = nodesAt(node, 'modifiers');
  const limitModifier = modifiers.length === 1 ? modifiers[0]! : undefined;
  const limit = integerConstant(
    limitModifier?.type === 'LIMIT_MODIFIER' ? nodeAt(limitModifier, 'limit') : null,
  );
  const offset = limitModifier?.offset ? integerConstant(nodeAt(limitModifier, 'offset')) : 0;
  const limited =
    limit !== null &&
    offset !== null &&
    conditions.length === conjuncts.length &&
    nodesAt(node, 'group_expressions').length === 0 &&
    !node.having &&
    !node.qualify &&
    !node.sample &&
    !(await aggregatesRows(c, node.select_list));
  return { conditions, limit: limited ? limit + offset! : null, conjuncts: conjuncts.length };
};
