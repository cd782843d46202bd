import {
  ARRAY,
  arrayValue,
  FLOAT,
  LIST,
  listValue,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { quoteIdent } from '../../shared/quoting';
import { termsOf } from './terms';

type Question = { dimensions: number; vector: Float32Array; query: string };

/**
 * A question as two temporary tables on connection `c`, for `searchSql` inside a view (a knowledge
 * base queried as a SQL table: a view holds no parameters): its embedding (one row,
 * `V FLOAT[dimensions]`) and its terms (`TERM`). Temporary objects belong to the connection, and a
 * connection runs one query at a time, so `suffix` only has to be unique within one query.
 */
export const questionTables = async (c: DuckDBConnection, question: Question, suffix: string) => {
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

/**
 * A question as two parameters of the search's own statement, for `searchSql` run on its own (a
 * search from REST, an agent or an evaluation): one statement per search, where the tables above
 * take five more (made, filled, dropped). `keywords`: `searchesKeywords(alpha)`; without, the terms
 * are left out, because the statement does not name them and DuckDB refuses a value it has no place for.
 */
export const questionParameters = (question: Question, keywords: boolean) => {
  const values: Record<string, DuckDBValue> = { question_vector: arrayValue([...question.vector]) };
  const types: Record<string, DuckDBType> = { question_vector: ARRAY(FLOAT, question.dimensions) };
  if (keywords) {
    values.question_terms = listValue([...termsOf(question.query).keys()]);
    types.question_terms = LIST(VARCHAR);
  }
  return {
    vectorTable: '(SELECT $question_vector AS V)',
    termsTable: '(SELECT unnest($question_terms) AS TERM)',
    values,
    types,
  };
};
