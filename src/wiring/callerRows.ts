import { forbidden, invalid } from '../shared/errors';
import { SqlErrorCode } from '../sql/errors';
import { leadingKeyword, trimStatement } from '../sql/lexical';
import type { SqlService } from '../sql/service';

/** A SQL error answer as the request's refusal: out of the caller's reach, or invalid. */
const refusalOf = (answer: { error_code: number; error_message: string }) =>
  answer.error_code === SqlErrorCode.Forbidden
    ? forbidden(answer.error_message)
    : invalid(answer.error_message, 'Invalid query');

/**
 * The rows one SELECT answers, read through the SQL endpoint's own path, so under the caller's role
 * and token (a scoped token reads its project only): what a request that names a table to read
 * (an evaluation's test table, its `from_sql`) may read is what that caller's SELECT may.
 * Anything but a SELECT is refused before it runs.
 */
export const callerRows =
  (sql: () => Pick<SqlService, 'execute'>) =>
  async (database: string, query: string): Promise<Record<string, unknown>[]> => {
    const text = trimStatement(query);
    const keyword = leadingKeyword(text);
    if (keyword !== 'SELECT' && keyword !== 'WITH')
      throw invalid(`Only a SELECT can be read here; got ${keyword || 'nothing'}`, 'Invalid query');
    const answer = await sql().execute(text, { db: database }, {});
    if (answer.type === 'error') throw refusalOf(answer);
    if (answer.type !== 'table') throw invalid('The query answers no rows', 'Invalid query');
    if (answer.truncated)
      throw invalid('The query answers more rows than one answer holds (SQL_ROW_LIMIT)', 'Invalid query');
    return answer.data.map((row) => Object.fromEntries(answer.column_names.map((n, i) => [n, row[i]])));
  };

/**
 * One write (INSERT INTO, CREATE [OR REPLACE] TABLE), its values bound as `:name` parameters, run
 * through the SQL endpoint's own path under the caller's role and token: what a request writes
 * for its caller (an evaluation's `save_to`, its generated test table) is what that caller's own
 * statement may, into a file or an external database alike. The rows it wrote.
 */
export const callerWrite =
  (sql: () => Pick<SqlService, 'execute'>) =>
  async (database: string, statement: string, params: Record<string, unknown>): Promise<number> => {
    const answer = await sql().execute(statement, { db: database }, params);
    if (answer.type === 'error') throw refusalOf(answer);
    return answer.type === 'ok' ? (answer.affected_rows ?? 0) : 0;
  };
