import { quoteMysqlIdent } from '../../../shared/quoting';
import { fail, type Outcome } from '../../outcome';
import type { SqlAnswer } from '../../../doorway/engine';
import { likeMatcher } from '../like';
import { literalOf } from '../substitute';
import type { VariableValue } from '../variables';
import type { SessionView } from '../view';

/** The engine's error as the client's outcome; undefined for any other answer. */
export const asError = (answer: SqlAnswer): Outcome | undefined =>
  answer.type === 'error' ? fail(answer.error_code, answer.error_message) : undefined;

/** Rows whose `column` matches a SHOW statement's LIKE pattern (all of them without one). */
const likeFilter = (rows: VariableValue[][], like: string | undefined, column = 0) => {
  if (like === undefined) return rows;
  const matches = likeMatcher(like);
  return rows.filter((r) => matches(String(r[column] ?? '')));
};

/**
 * Rows filtered by a client's WHERE text, evaluated by the engine over the rows as a VALUES list
 * (so the WHERE means what it means in any other SELECT: numbers stay numbers, `Id > 200` compares
 * them as such). A column holds numbers or text, not both.
 */
const whereFilter = async (
  session: Pick<SessionView, 'query'>,
  columns: string[],
  rows: VariableValue[][],
  where: string,
  signal?: AbortSignal,
): Promise<Outcome | VariableValue[][]> => {
  if (rows.length === 0) return rows;
  const values = rows.map((r) => `(${r.map((v) => literalOf(v)).join(', ')})`).join(', ');
  const answer = await session.query(
    `SELECT * FROM (VALUES ${values}) AS shown(${columns.map(quoteMysqlIdent).join(', ')}) WHERE ${where}`,
    signal,
  );
  if (answer.type !== 'table') return asError(answer) ?? rows;
  return answer.data.map((r) => r.map((v) => (v === null ? null : String(v))));
};

/** A SHOW statement's rows after its LIKE or WHERE, or the error its WHERE met. */
export const filtered = async (
  session: Pick<SessionView, 'query'>,
  columns: string[],
  rows: VariableValue[][],
  filter: { like: string | undefined; where: string | undefined },
  signal?: AbortSignal,
): Promise<Outcome | VariableValue[][]> => {
  const liked = likeFilter(rows, filter.like);
  return filter.where ? whereFilter(session, columns, liked, filter.where, signal) : liked;
};
