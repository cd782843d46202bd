import { fail, MysqlError, ok, table, type Outcome } from '../../outcome';
import type { Statement } from '../statement';
import type { SessionView } from '../view';

const PROCESS_COLUMNS = ['Id', 'User', 'Host', 'db', 'Command', 'Time', 'State', 'Info'];

/** SHOW [FULL] PROCESSLIST: every connection of the server (the statement's text cut at 100 characters unless FULL). */
export const showProcesslist = (
  session: Pick<SessionView, 'server'>,
  s: Extract<Statement, { kind: 'showProcesslist' }>,
): Outcome =>
  table(
    PROCESS_COLUMNS,
    ['BIGINT', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'INTEGER', 'VARCHAR', 'VARCHAR'],
    session.server
      .processes()
      .map((p) => [
        p.id,
        p.user,
        p.host,
        p.db,
        p.command,
        p.seconds,
        p.command === 'Query' ? 'executing' : '',
        s.full || p.info === null ? p.info : p.info.slice(0, 100),
      ]),
  );

export const kill = (
  session: Pick<SessionView, 'server'>,
  s: Extract<Statement, { kind: 'kill' }>,
): Outcome =>
  session.server.kill(s.id, s.scope) ? ok() : fail(MysqlError.NoSuchThread, `Unknown thread id: ${s.id}`);
