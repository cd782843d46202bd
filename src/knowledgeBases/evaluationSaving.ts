import { DomainError, isDomainError } from '../shared/errors';
import { quoteMysqlIdent, quoteQualifiedMysqlIdent } from '../shared/quoting';

/**
 * A write run as the caller's own statement would be (its role, its token's reach, the external
 * database's rules): the statement, its `:name` parameters; the rows written.
 */
export type CallerWrite = (
  database: string,
  statement: string,
  params: Record<string, unknown>,
) => Promise<number>;

/** A refusal of a read or write of an option's table names the option (`save_to files.t: …`). */
export const naming = async <T>(option: string, table: string, work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (error) {
    if (!isDomainError(error)) throw error;
    throw new DomainError(
      error.kind,
      error.title,
      `${option} ${table}: ${error.detail}`,
      error.retryAfterSeconds,
    );
  }
};

/** A cell as a parameter: lists and objects as JSON text, the rest as they are. */
const asParameter = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : (v ?? null));

/**
 * `(SELECT :p0 AS a, :p1 AS b UNION ALL SELECT …)`: rows as a query whose every value is a bound
 * parameter, so no value is ever spliced into the text sent (nor, through the write path, into
 * the external database's).
 */
const rowsQuery = (columns: readonly string[], rows: readonly (readonly unknown[])[]) => {
  const params: Record<string, unknown> = {};
  const selects = rows.map(
    (row, r) =>
      `SELECT ${columns
        .map((column, c) => {
          params[`p${r}_${c}`] = asParameter(row[c]);
          return `:p${r}_${c} AS ${quoteMysqlIdent(column)}`;
        })
        .join(', ')}`,
  );
  return { query: `(${selects.join(' UNION ALL ')})`, params };
};

/**
 * `save_to`: the evaluation's result row appended to the table (MindsDB's `save_to_table`: made
 * when there is none; a file is, an external database's table must exist), as the caller's
 * `INSERT INTO db.t (SELECT …)` would be.
 */
export const saveResultRow = async (
  write: CallerWrite,
  project: string,
  saveTo: string,
  row: Readonly<Record<string, unknown>>,
) => {
  const columns = Object.keys(row);
  const { query, params } = rowsQuery(columns, [columns.map((c) => row[c])]);
  await naming('save_to', saveTo, () =>
    write(project, `INSERT INTO ${quoteQualifiedMysqlIdent(saveTo)} ${query}`, params),
  );
};

/**
 * A generated test set written to `test_table`, replacing it (MindsDB's `generate_data` does so):
 * columns question, answer and doc_id, which either version reads back.
 */
export const writeGeneratedSet = async (
  write: CallerWrite,
  project: string,
  testTable: string,
  cases: readonly { question: string; answer: string; docId: string }[],
) => {
  if (cases.length === 0) return;
  const { query, params } = rowsQuery(
    ['question', 'answer', 'doc_id'],
    cases.map((c) => [c.question, c.answer, c.docId]),
  );
  await naming('test_table', testTable, () =>
    write(project, `CREATE OR REPLACE TABLE ${quoteQualifiedMysqlIdent(testTable)} ${query}`, params),
  );
};
