import { ARRAY, arrayValue, FLOAT, LIST, listValue, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../shared/quoting';
import { termsOf } from './terms';

/**
 * A question as two temporary tables on connection `c`, for `searchSql`: its embedding (one row,
 * `V FLOAT[dimensions]`) and its terms (`TERM`). Temporary objects belong to the connection, and a
 * connection runs one query at a time, so `suffix` only has to be unique within one query.
 */
export const questionTables = async (
  c: DuckDBConnection,
  question: { dimensions: number; vector: Float32Array; query: string },
  suffix: string,
) => {
  const names = [`__mindledger_kb_vector_${suffix}`, `__mindledger_kb_terms_${suffix}`];
  const [vectorTable, termsTable] = names.map(quoteIdent) as [string, string];
  await c.run(`CREATE OR REPLACE TEMP TABLE ${vectorTable} (V FLOAT[${question.dimensions}])`);
  await c.run(
    `INSERT INTO ${vectorTable} VALUES ($v)`,
    { v: arrayValue([...question.vector]) },
    { v: ARRAY(FLOAT, question.dimensions) },
  );
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${termsTable} AS SELECT unnest($t::VARCHAR[]) AS TERM`,
    { t: listValue([...termsOf(question.query).keys()]) },
    { t: LIST(VARCHAR) },
  );
  /** `names`: the tables' names, unquoted. */
  return { vectorTable, termsTable, names };
};
