/** A job's text as its statements: split as the MySQL door splits a multi-statement query. */
export { statementTexts as splitStatements } from '../shared/sqlStatements';

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
