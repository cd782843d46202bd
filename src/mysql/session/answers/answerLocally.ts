import { ok, type Outcome } from '../../outcome';
import type { LocalStatement } from '../statement';
import type { SessionView } from '../view';
import { kill, showProcesslist } from './processes';
import { showCharset, showCollation, showGrants, showPlugins } from './server';
import { showColumns, showCreateDatabase, showCreateTable, showIndex, showTableStatus } from './tables';
import { connectionSelect, set, showVariables } from './variables';
import { showWarnings } from './warnings';

/** The answer to a statement the connection answers itself (`classify` chose it). */
export const answerLocally = async (
  session: SessionView,
  s: LocalStatement,
  signal?: AbortSignal,
): Promise<Outcome> => {
  switch (s.kind) {
    case 'connectionSelect':
      return connectionSelect(session, s);
    case 'set':
      return set(session, s, signal);
    case 'showVariables':
      return showVariables(session, s, signal);
    case 'showColumns':
      return showColumns(session, s, signal);
    case 'showCreateTable':
      return showCreateTable(session, s, signal);
    case 'showCreateDatabase':
      return showCreateDatabase(session, s, signal);
    case 'showIndex':
      return showIndex(session, s, signal);
    case 'showTableStatus':
      return showTableStatus(session, s, signal);
    case 'showWarnings':
      return showWarnings(session, s);
    case 'showProcesslist':
      return showProcesslist(session, s);
    case 'showCollation':
      return showCollation(session, s, signal);
    case 'showCharset':
      return showCharset(session, s, signal);
    case 'showPlugins':
      return showPlugins();
    case 'showGrants':
      return showGrants(session, s);
    case 'kill':
      return kill(session, s);
    case 'transaction':
      // Every statement commits on its own (the tables change only through commands): nothing to begin or end.
      return ok();
    default: {
      const _exhaustive: never = s;
      return _exhaustive;
    }
  }
};
