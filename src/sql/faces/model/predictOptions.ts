import { QUERY_OVERRIDES } from '../../../engines/llm/llmModelSpec';
import type { PredictOptions } from '../../../engines/ml/predict';
import { significant, textOf, tokenize, unquoted, type Token } from '../../../shared/sqlTokens';
import { SqlError, SqlErrorCode } from '../../errors';

/**
 * MindsDB's prediction-time parameters in a SELECT: `SELECT * FROM p.m WHERE a = 1 USING
 * fixed_confidence = 0.8` (and after a join: `… JOIN p.m AS m USING fixed_confidence = 0.8`). The
 * clause closes the statement; DuckDB would not parse it, so it is cut off the text here and given
 * to the prediction step. A join's own `USING (col)` always has its parenthesis, so `USING name =`
 * at the top level can only be this clause.
 */

/** The options a prediction understands, as `USING` spells them. */
const SUPPORTED = ['fixed_confidence'] as const;

export type SelectPredictOptions = Pick<PredictOptions, 'fixed_confidence'> & {
  /** An LLM model's options for this query (prompt_template, max_tokens, …: QUERY_OVERRIDES). */
  llm?: Record<string, unknown>;
};

const isLlmOption = (k: string) => (QUERY_OVERRIDES as readonly string[]).includes(k);

const symbolIs = (sql: string, t: Token | undefined, c: string) => t?.kind === 'symbol' && sql[t.start] === c;

/** One `key = value`'s value, from its text: a quoted string, a number, a boolean, null, JSON, or a word. */
const valueOf = (sql: string, tokens: readonly Token[]): unknown => {
  const text = sql.slice(tokens[0]!.start, tokens[tokens.length - 1]!.end).trim();
  if (tokens.length === 1 && (tokens[0]!.kind === 'string' || tokens[0]!.kind === 'dquoted'))
    return unquoted(sql, tokens[0]!);
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) return Number(text);
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  if (/^null$/i.test(text)) return null;
  if (/^[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new SqlError(SqlErrorCode.Syntax, `USING: ${text} is not a value`);
    }
  }
  return text;
};

/** The options' values checked: a refusal names the option and what it takes. */
const checked = (raw: Map<string, unknown>): SelectPredictOptions => {
  const unknown = [...raw.keys()].filter(
    (k) => !(SUPPORTED as readonly string[]).includes(k) && !isLlmOption(k),
  );
  if (unknown.length)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `Unknown prediction option${unknown.length > 1 ? 's' : ''} in USING: ${unknown.join(', ')} (supported: ${SUPPORTED.join(', ')}; an LLM model's: ${QUERY_OVERRIDES.join(', ')})`,
    );
  const options: SelectPredictOptions = {};
  const llm = [...raw.entries()].filter(([k]) => isLlmOption(k));
  if (llm.length) options.llm = Object.fromEntries(llm);
  if (raw.has('fixed_confidence')) {
    const v = raw.get('fixed_confidence');
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0 || n > 1)
      throw new SqlError(
        SqlErrorCode.Invalid,
        `USING fixed_confidence must be a number above 0 and at most 1, got ${JSON.stringify(v)}`,
      );
    options.fixed_confidence = n;
  }
  return options;
};

/**
 * A SELECT's text (MySQL dialect) without its closing `USING k = v, …` clause, and that clause's
 * options (null when there is none).
 */
export const takePredictOptions = (sql: string): { sql: string; options: SelectPredictOptions | null } => {
  // Most queries have no USING at all.
  if (!/\bUSING\b/i.test(sql)) return { sql, options: null };
  const tokens = significant(tokenize(sql, 'mysql'));
  let depth = 0;
  let at = -1;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (symbolIs(sql, t, '(')) depth++;
    else if (symbolIs(sql, t, ')')) depth--;
    else if (
      depth === 0 &&
      t.kind === 'word' &&
      textOf(sql, t).toUpperCase() === 'USING' &&
      (tokens[k + 1]?.kind === 'word' || tokens[k + 1]?.kind === 'identifier') &&
      symbolIs(sql, tokens[k + 2], '=')
    ) {
      at = k;
      break;
    }
  }
  if (at < 0) return { sql, options: null };
  const raw = new Map<string, unknown>();
  let k = at + 1;
  for (;;) {
    const key = tokens[k]!;
    if ((key.kind !== 'word' && key.kind !== 'identifier') || !symbolIs(sql, tokens[k + 1], '='))
      throw new SqlError(SqlErrorCode.Syntax, `USING: expected name = value at "${textOf(sql, key)}"`);
    k += 2;
    const value: Token[] = [];
    let nesting = 0;
    for (; k < tokens.length; k++) {
      const t = tokens[k]!;
      if (nesting === 0 && (symbolIs(sql, t, ',') || symbolIs(sql, t, ';'))) break;
      if (symbolIs(sql, t, '(') || symbolIs(sql, t, '[') || symbolIs(sql, t, '{')) nesting++;
      if (symbolIs(sql, t, ')') || symbolIs(sql, t, ']') || symbolIs(sql, t, '}')) nesting--;
      value.push(t);
    }
    const name = key.kind === 'identifier' ? unquoted(sql, key) : textOf(sql, key);
    if (!value.length) throw new SqlError(SqlErrorCode.Syntax, `USING ${name}: the value is missing`);
    raw.set(name.toLowerCase(), valueOf(sql, value));
    if (!symbolIs(sql, tokens[k], ',')) break;
    k++;
    if (k >= tokens.length) throw new SqlError(SqlErrorCode.Syntax, 'USING: expected name = value after ","');
  }
  return { sql: sql.slice(0, tokens[at]!.start).trimEnd(), options: checked(raw) };
};
