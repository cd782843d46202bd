import {
  closingParen,
  isKeyword,
  isRelationName,
  significant,
  textOf,
  tokenize,
  unquoted,
  type Token,
} from '../shared/sqlTokens';

/** A table a SELECT reads: its database when written (`db.t`), and where its name ends in the text. */
type TableRef = { readonly database: string | null; readonly table: string; readonly end: number };

const isName = (t: Token | undefined) => t !== undefined && (t.kind === 'word' || t.kind === 'identifier');
const nameOf = (sql: string, t: Token) => (t.kind === 'identifier' ? unquoted(sql, t) : textOf(sql, t));
const isSymbol = (sql: string, t: Token | undefined, symbol: string) =>
  t !== undefined && t.kind === 'symbol' && textOf(sql, t) === symbol;

/**
 * The tables a SELECT (MySQL's dialect) reads by name: after FROM, JOIN, and the commas of a FROM
 * list; not subqueries, table functions, nor the names of its own CTEs. What is not found here is
 * not rewritten: the planner then reads it as it is now, which the replay reports as such.
 */
export const tableRefsOf = (sql: string): TableRef[] => {
  const tokens = significant(tokenize(sql, 'mysql'));
  const ctes = new Set<string>();
  for (let i = 0; i + 2 < tokens.length; i++)
    if (isName(tokens[i]) && isKeyword(sql, tokens[i + 1], 'AS') && isSymbol(sql, tokens[i + 2], '('))
      ctes.add(nameOf(sql, tokens[i]!).toLowerCase());
  const refs: TableRef[] = [];
  /** A name (dotted) at `i`: the ref (null for a CTE's), and the index after it; null when `i` holds none. */
  const refAt = (i: number): { ref: TableRef | null; next: number } | null => {
    if (!isRelationName(sql, tokens[i])) return null;
    const parts = [tokens[i]!];
    let k = i + 1;
    while (isSymbol(sql, tokens[k], '.') && isName(tokens[k + 1])) {
      parts.push(tokens[k + 1]!);
      k += 2;
    }
    // A table function (`read_csv(…)`), not a table.
    if (isSymbol(sql, tokens[k], '(')) return null;
    const names = parts.map((p) => nameOf(sql, p));
    const table = names.at(-1)!;
    const database = names.length > 1 ? names.at(-2)! : null;
    if (database === null && ctes.has(table.toLowerCase())) return { ref: null, next: k };
    return { ref: { database, table, end: parts.at(-1)!.end }, next: k };
  };
  for (let i = 0; i < tokens.length; i++) {
    const from = isKeyword(sql, tokens[i], 'FROM');
    const join = isKeyword(sql, tokens[i], 'JOIN');
    if (!from && !join) continue;
    let k = i + 1;
    for (;;) {
      if (isSymbol(sql, tokens[k], '(')) {
        // A subquery: its own FROMs are found as the scan goes on; skip to its alias.
        const close = closingParen(sql, tokens, k);
        if (close < 0) break;
        k = close + 1;
      } else {
        const found = refAt(k);
        if (!found) break;
        if (found.ref) refs.push(found.ref);
        k = found.next;
      }
      // An alias: `[AS] name`.
      if (isKeyword(sql, tokens[k], 'AS')) k++;
      if (isRelationName(sql, tokens[k])) k++;
      if (!from || !isSymbol(sql, tokens[k], ',')) break;
      k++;
    }
  }
  return refs;
};

/** The SELECT reading each table it names as of log position `position` (`… AS OF POSITION n`). */
export const asOfSql = (sql: string, position: bigint) => {
  const refs = tableRefsOf(sql);
  let out = sql;
  for (const ref of [...refs].sort((a, b) => b.end - a.end))
    out = `${out.slice(0, ref.end)} AS OF POSITION ${position}${out.slice(ref.end)}`;
  return out;
};

/** The LLM functions a SELECT may call (src/sql/faces/llm/face.ts). */
const LLM_FUNCTIONS = ['LLM', 'LLM_FILTER', 'LLM_REDUCE', 'LLM_RERANK'];

/**
 * Whether a SELECT's text calls `LLM(…)` or another LLM function (a model call: never made by a
 * replay), read by the tokenizer: a replay has no DuckDB at hand to parse it
 * (src/sql/faces/llm/face.ts's `calledIn` asks the same of a parsed SELECT).
 */
export const textCallsLlm = (sql: string) => {
  const tokens = significant(tokenize(sql, 'mysql'));
  return tokens.some(
    (t, i) => LLM_FUNCTIONS.some((name) => isKeyword(sql, t, name)) && isSymbol(sql, tokens[i + 1], '('),
  );
};
