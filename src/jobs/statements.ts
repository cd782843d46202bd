/**
 * A job's text as its statements: split at `;` outside quotes ('…', "…", `…`), blanks dropped, as
 * MindsDB's split_sql.
 */
export const splitStatements = (text: string): string[] => {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== null) {
      current += c;
      if (c === '\\' && quote !== '`' && i + 1 < text.length) current += text[++i];
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    if (c === ';') {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
};

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
