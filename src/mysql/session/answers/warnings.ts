import { table, type Outcome } from '../../outcome';
import type { Statement } from '../statement';
import type { SessionView } from '../view';

/** SHOW WARNINGS / SHOW ERRORS / SHOW COUNT(*) WARNINGS: the last statement's diagnostics. */
export const showWarnings = (
  session: Pick<SessionView, 'diagnostics'>,
  s: Extract<Statement, { kind: 'showWarnings' }>,
): Outcome => {
  const shown = session.diagnostics.filter((d) => !s.errorsOnly || d.level === 'Error');
  if (s.count)
    return table([`@@session.${s.errorsOnly ? 'error' : 'warning'}_count`], ['BIGINT'], [[shown.length]]);
  return table(
    ['Level', 'Code', 'Message'],
    ['VARCHAR', 'INTEGER', 'VARCHAR'],
    shown.map((d) => [d.level, d.code, d.message]),
  );
};
