import { significant, textOf, unquoted } from '../../../shared/sqlTokens';
import { fail, MysqlError, ok, table, textTable, type Outcome } from '../../outcome';
import { clientTokens } from '../clientText';
import type { Statement } from '../statement';
import type { VariableValue } from '../variables';
import type { SessionView } from '../view';
import { asError, filtered } from './filters';

/** The value of `SET x = <text>`: a literal, ON/OFF/DEFAULT, another variable, or any expression (the engine's). */
const valueOfText = async (
  session: Pick<SessionView, 'query'>,
  text: string,
  signal?: AbortSignal,
): Promise<{ value: VariableValue | undefined } | Outcome> => {
  const tokens = significant(clientTokens(text) ?? []);
  const only = tokens.length === 1 ? tokens[0]! : undefined;
  switch (only?.kind) {
    case 'number':
      return { value: Number(textOf(text, only)) };
    case 'string':
    case 'dquoted':
      return { value: unquoted(text, only) };
    case 'word':
    case 'identifier': {
      const word = textOf(text, only).toUpperCase();
      if (word === 'DEFAULT') return { value: undefined };
      if (word === 'NULL') return { value: null };
      return { value: only.kind === 'identifier' ? unquoted(text, only) : textOf(text, only) };
    }
    default:
      break;
  }
  const answer = await session.query(`SELECT ${text}`, signal);
  if (answer.type !== 'table') return asError(answer) ?? { value: null };
  const cell = answer.data[0]?.[0] ?? null;
  return {
    value:
      typeof cell === 'number' || typeof cell === 'string' || cell === null ? cell : JSON.stringify(cell),
  };
};

/** SET: each assignment is the engine's to refuse first (its own settings), then the session keeps it. */
export const set = async (
  session: Pick<SessionView, 'query' | 'variables' | 'userVariables'>,
  s: Extract<Statement, { kind: 'set' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  for (const { text, assignment } of s.assignments) {
    const verdict = await session.query(`SET ${text}`, signal);
    const refused = asError(verdict);
    if (refused) return refused;
    switch (assignment.kind) {
      case 'names':
        for (const v of ['character_set_client', 'character_set_connection', 'character_set_results'])
          session.variables.set(v, assignment.charset);
        session.variables.set('collation_connection', assignment.collation);
        break;
      case 'system':
      case 'user': {
        const value = await valueOfText(session, assignment.valueText, signal);
        if ('type' in value) return value;
        if (assignment.kind === 'system') session.variables.set(assignment.name, value.value);
        else session.userVariables.set(assignment.name, value.value ?? null);
        break;
      }
      case 'other':
        break;
      default: {
        const _exhaustive: never = assignment;
        return _exhaustive;
      }
    }
  }
  return ok();
};

/** `SELECT @@x, DATABASE() …`: one row of the connection's values. */
export const connectionSelect = (
  session: Pick<SessionView, 'valueOf'>,
  s: Extract<Statement, { kind: 'connectionSelect' }>,
): Outcome => {
  const row: VariableValue[] = [];
  for (const item of s.items) {
    const known = session.valueOf(item.expression);
    if (!known)
      return fail(
        MysqlError.UnknownSystemVariable,
        `Unknown system variable '${item.name.replace(/^@@(\w+\.)?/, '')}'`,
      );
    row.push(known.value);
  }
  return table(
    s.items.map((i) => i.name),
    row.map((v) => (typeof v === 'number' ? 'BIGINT' : 'VARCHAR')),
    s.noRows ? [] : [row],
  );
};

export const showVariables = async (
  session: Pick<SessionView, 'query' | 'variables'>,
  s: Extract<Statement, { kind: 'showVariables' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const columns = ['Variable_name', 'Value'];
  const all: VariableValue[][] = session.variables.all().map(([n, v]) => [n, v === null ? '' : String(v)]);
  const rows = await filtered(session, columns, all, s, signal);
  return Array.isArray(rows) ? textTable(columns, rows) : rows;
};
