import type { OkAnswer } from './answers';
import { leadingKeyword, trimStatement } from './lexical';
import { isSyntaxProblem, parseMindsStatement, type MindsStatement } from './parse';
import { FORBIDDEN, SELECT_LIKE } from './selectText';
import type { SqlPorts } from './ports';

export type JobStatement = Extract<MindsStatement, { kind: 'CreateJob' | 'DropJob' }>;

const ok: OkAnswer = { type: 'ok', affected_rows: null };

/** CREATE JOB and DROP JOB, through the jobs service (the same commands as REST). */
export const jobStatementsOf = (services: Pick<SqlPorts, 'jobs'>) => ({
  run: async (statement: JobStatement, db: string): Promise<OkAnswer> => {
    const project = statement.name.project ?? db;
    if (statement.kind === 'DropJob') {
      await services.jobs.remove(project, statement.name.name, statement.ifExists, {
        forget: statement.forget,
      });
      return ok;
    }
    await services.jobs.create(project, {
      name: statement.name.name,
      query: statement.query,
      ifQuery: statement.ifQuery,
      startAt: statement.start,
      endAt: statement.end,
      every: statement.every,
      ifNotExists: statement.ifNotExists,
    });
    return ok;
  },
});

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
