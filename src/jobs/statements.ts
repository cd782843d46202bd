import { splitStatements as statementsOf } from '../shared/sqlStatements';

/**
 * A job's text as its statements: split at `;` outside quotes and comments, as the MySQL door splits
 * a multi-statement query (`src/shared/sqlStatements.ts`), trimmed, blanks dropped (MindsDB's
 * split_sql).
 */
export const splitStatements = (text: string): string[] =>
  statementsOf(text)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

const pad = (n: number) => String(n).padStart(2, '0');
const datetime = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

/**
 * MindsDB's template variables: `{{START_DATETIME}}` and `{{START_DATE}}` (this run's scheduled
 * time, UTC), `{{PREVIOUS_START_DATETIME}}` (the run before's, or the job's creation).
 */
export const fillVariables = (sql: string, run: { tick: Date; previous: Date }) =>
  sql
    .replaceAll('{{PREVIOUS_START_DATETIME}}', datetime(run.previous))
    .replaceAll('{{START_DATETIME}}', datetime(run.tick))
    .replaceAll('{{START_DATE}}', datetime(run.tick).slice(0, 10));
