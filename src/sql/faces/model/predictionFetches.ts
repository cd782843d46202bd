import type { DuckDBConnection } from '@duckdb/node-api';
import { nodeAt, serializedConstantOf, walk, type AstNode } from '../../pipeline/ast';
import type { SqlDialect } from '../../../integrations/dialects';
import { pushableFilters, type ExternalFetch } from '../integration/federation';
import { inputNarrowing } from './predictionInput';

/**
 * Whether a condition holds a string constant: MariaDB compares text by a case- and
 * trailing-space-insensitive collation, so it may send rows DuckDB then drops, and a LIMIT applied
 * there could leave too few.
 */
const comparesText = async (where: AstNode | undefined) => {
  let text = false;
  await walk(where, (n) => {
    if (n.class === 'CONSTANT' && typeof serializedConstantOf(n).value === 'string') text = true;
  });
  return text;
};

type Filter = (dialect: SqlDialect) => string;

/**
 * The external tables a batch prediction reads (`FROM pg.rentals AS t JOIN proj.m AS m WHERE t.x >
 * 3 LIMIT 100`), each copied into DuckDB before the model predicts there. A table joined with the
 * model directly takes along the WHERE conditions the database can evaluate (column against
 * constant, qualified by its alias: an unqualified column may be the model's) and, when those are
 * the whole WHERE, compare no text, and nothing after the join reorders or groups rows, the LIMIT:
 * only the rows the answer needs cross the wire. A table further away (joined with a file first) takes its filters only.
 */
export const modelInputFetches = async <E extends { node: AstNode; table: string }>(
  c: DuckDBConnection,
  statement: AstNode,
  model: AstNode,
  externals: E[],
  fetchOf: (e: E, i: number, filters: Filter[], limit: number | null) => ExternalFetch,
): Promise<ExternalFetch[]> => {
  const node = nodeAt(statement, 'node');
  const where = nodeAt(node, 'where_clause');
  const from = nodeAt(node, 'from_table');
  const fetches: ExternalFetch[] = [];
  for (const [i, e] of externals.entries()) {
    const alias = String(e.node.alias || e.table);
    const filters = pushableFilters(where, alias, false);
    let limit: number | null = null;
    if (
      from?.type === 'JOIN' &&
      ((from.left === model && from.right === e.node) || (from.right === model && from.left === e.node))
    ) {
      const narrowing = await inputNarrowing(c, statement, from, e.node, alias);
      if (narrowing.limit !== null && filters.length === narrowing.conjuncts && !(await comparesText(where)))
        limit = narrowing.limit;
    }
    fetches.push(fetchOf(e, i, filters, limit));
  }
  return fetches;
};
