import { leadingKeyword, trimStatement } from '../lexical';
import { isSyntaxProblem, parseMindsStatement } from '../parse';
import { FORBIDDEN, SELECT_LIKE } from '../pipeline/selectText';

/**
 * Why a job's statement would not parse, or null (MindsDB parses each one when the job is made):
 * MindsDB's own statements by the grammar; SELECTs are left to their run (their tables may be made
 * by the job's earlier statements). Template variables (`{{START_DATETIME}}`) count as empty.
 */
export const jobStatementProblem = (text: string): string | null => {
  const sql = trimStatement(text.replace(/\{\{\w+\}\}/g, ''));
  if (!sql) return 'the statement is empty';
  if (SELECT_LIKE.has(leadingKeyword(sql))) return null;
  if (FORBIDDEN.has(leadingKeyword(sql)))
    return `${leadingKeyword(sql)} is not allowed: the tables are projections of the event log and change only through commands`;
  const parsed = parseMindsStatement(sql);
  return isSyntaxProblem(parsed)
    ? `syntax error at line ${parsed.line}, column ${parsed.column}: ${parsed.message}`
    : null;
};
