import type { ReplayPorts } from '../agentRuns/replay';
import { leadingKeyword, trimStatement } from '../sql/lexical';
import type { SqlService } from '../sql/service';

/**
 * What a replay reads an agent's recorded SQL with: the SQL endpoint's own path, so under the
 * caller's role and token, and only a SELECT (a statement the agent's guard refused is never run).
 */
export const replayPorts = (
  sql: () => Pick<SqlService, 'execute'>,
  isIntegration: (name: string) => Promise<boolean>,
): ReplayPorts => ({
  select: async (database, query) => {
    const text = trimStatement(query);
    const keyword = leadingKeyword(text);
    if (keyword !== 'SELECT' && keyword !== 'WITH')
      return { ok: false, error: `Only a SELECT is read again; got ${keyword || 'nothing'}` };
    const answer = await sql().execute(text, { db: database }, {});
    if (answer.type === 'error') return { ok: false, error: answer.error_message };
    if (answer.type !== 'table') return { ok: false, error: 'The statement answers no rows' };
    return { ok: true, columns: answer.column_names, rows: answer.data };
  },
  holdsDataOnly: async (database) => database.toLowerCase() === 'files' || (await isIntegration(database)),
});
