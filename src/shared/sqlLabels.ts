import { isKeyword, significant, SqlSyntaxError, textOf, tokenize, type Token } from './sqlTokens';

/**
 * Column labels as MySQL gives them (and so every door: HTTP, MySQL, PostgreSQL): an item with an
 * alias is labelled with the alias; a column written in the query with its name as written
 * (`SELECT name FROM mindsdb.models` → `name`, where DuckDB says `NAME`, the table's own name); any
 * other expression with its text as written (`COUNT(*)`, not DuckDB's `count_star()`); and the
 * columns of a `*` with the source's own names (system tables name theirs in upper case).
 *
 * Read from the client's text with the one tokenizer: the outermost SELECT's list (after any WITH),
 * items split at top-level commas. Where the list cannot be matched to the answer's columns one to
 * one (several stars, a text that does not tokenize), the answer's labels are kept as they are.
 */

/** Words that end an expression, never an implicit alias. */
const NOT_ALIASES = new Set(['END', 'NULL', 'TRUE', 'FALSE', 'DISTINCT', 'ALL']);

/** Words that end a SELECT list at its parenthesis depth (the MySQL door's substitutions read it too). */
export const SELECT_LIST_ENDS: ReadonlySet<string> = new Set([
  'FROM',
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'INTO',
  'WINDOW',
  'QUALIFY',
  'OFFSET',
  'FETCH',
  'FOR',
]);

type Item = { tokens: Token[] };
type Label = { kind: 'keep' } | { kind: 'star' } | { kind: 'label'; text: string };

const isSymbol = (sql: string, t: Token | undefined, c: string) =>
  t !== undefined && t.kind === 'symbol' && sql[t.start] === c;

const nameOf = (sql: string, t: Token) =>
  t.kind === 'word'
    ? textOf(sql, t)
    : textOf(sql, t).slice(1, -1).split(sql[t.start]!.repeat(2)).join(sql[t.start]);

/** The outermost SELECT list's items, or null when there is none to read. */
const selectItems = (sql: string): Item[] | null => {
  let tokens: readonly Token[];
  try {
    tokens = significant(tokenize(sql, 'mysql-client'));
  } catch (error) {
    if (error instanceof SqlSyntaxError) return null;
    throw error;
  }
  let depth = 0;
  let start = -1;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (isSymbol(sql, t, '(')) depth++;
    else if (isSymbol(sql, t, ')')) depth--;
    else if (depth === 0 && isKeyword(sql, t, 'SELECT')) {
      start = k + 1;
      break;
    }
  }
  if (start === -1) return null;
  while (['DISTINCT', 'ALL', 'DISTINCTROW'].some((w) => isKeyword(sql, tokens[start], w))) start++;
  const items: Item[] = [];
  let current: Token[] = [];
  depth = 0;
  for (let k = start; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (isSymbol(sql, t, '(') || isSymbol(sql, t, '[')) depth++;
    else if (isSymbol(sql, t, ')') || isSymbol(sql, t, ']')) {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && t.kind === 'word' && SELECT_LIST_ENDS.has(textOf(sql, t).toUpperCase())) break;
    else if (depth === 0 && isSymbol(sql, t, ';')) break;
    if (depth === 0 && isSymbol(sql, t, ',')) {
      items.push({ tokens: current });
      current = [];
    } else current.push(t);
  }
  if (current.length > 0) items.push({ tokens: current });
  return items.some((i) => i.tokens.length === 0) ? null : items;
};

/** How one item is labelled. */
const labelOf = (sql: string, item: Item): Label => {
  const ts = item.tokens;
  const last = ts[ts.length - 1]!;
  // `expr AS alias`, `expr alias`: DuckDB labels these with the alias already.
  if (ts.length >= 2 && isKeyword(sql, ts[ts.length - 2], 'AS')) return { kind: 'keep' };
  if (isSymbol(sql, last, '*'))
    return ts.length === 1 || isSymbol(sql, ts[ts.length - 2], '.')
      ? { kind: 'star' }
      : { kind: 'label', text: textOf(sql, last) };
  // A column: `name`, `t.name`, `db.t.name`, quoted or not.
  const column =
    ts.length % 2 === 1 &&
    ts.every((t, i) =>
      i % 2 === 1
        ? isSymbol(sql, t, '.')
        : t.kind === 'word' || t.kind === 'identifier' || t.kind === 'dquoted',
    );
  if (column) return { kind: 'label', text: nameOf(sql, last) };
  // A string alone is labelled with its text (MySQL: `SELECT 'abc'` → `abc`).
  if (ts.length === 1 && last.kind === 'string') return { kind: 'label', text: nameOf(sql, last) };
  const before = ts[ts.length - 2];
  const implicitAlias =
    ts.length >= 2 &&
    (last.kind === 'word' || last.kind === 'identifier' || last.kind === 'dquoted') &&
    !NOT_ALIASES.has(textOf(sql, last).toUpperCase()) &&
    before !== undefined &&
    !(before.kind === 'symbol' && sql[before.start] !== ')') &&
    !(
      before.kind === 'word' &&
      /^(AND|OR|NOT|IS|IN|LIKE|BETWEEN|THEN|ELSE|WHEN|CASE|INTERVAL|DIV|MOD)$/i.test(textOf(sql, before))
    );
  if (implicitAlias) return { kind: 'keep' };
  return { kind: 'label', text: sql.slice(ts[0]!.start, last.end) };
};

/**
 * Labels by statement text and answer columns: every answer to a repeated SELECT is labelled, and
 * reading the select list again was 2% of a cached answer's time (issue 41's profile).
 */
const memo = new Map<string, readonly string[]>();
const MEMO_ENTRIES = 512;
const MEMO_MAX_CHARS = 4096;

/**
 * The labels MySQL would give the answer's columns (`columns`: the answer's, in order) of the
 * SELECT in `sql`; `columns` itself when the list does not match them one to one.
 */
export const writtenLabels = (sql: string, columns: readonly string[]): string[] => {
  if (sql.length > MEMO_MAX_CHARS) return labelsOf(sql, columns);
  // The columns as JSON: joined by a separator, [] and [''] (or ['a\u0000b'] and ['a', 'b']) made one
  // key, and one answer was labelled as the other. JSON holds no raw NUL, so the last one divides.
  const key = `${sql}\u0000${JSON.stringify(columns)}`;
  let labels = memo.get(key);
  if (!labels) {
    // Cleared when full: a repeated statement (a dashboard, a driver's probe) is read again at once.
    if (memo.size >= MEMO_ENTRIES) memo.clear();
    memo.set(key, (labels = labelsOf(sql, columns)));
  }
  return [...labels];
};

const labelsOf = (sql: string, columns: readonly string[]): string[] => {
  const items = selectItems(sql);
  if (!items) return [...columns];
  const labels = items.map((item) => labelOf(sql, item));
  const stars = labels.filter((l) => l.kind === 'star').length;
  if (stars > 1 || (stars === 0 && labels.length !== columns.length)) return [...columns];
  if (stars === 1 && labels.length - 1 > columns.length) return [...columns];
  const out = [...columns];
  const starAt = labels.findIndex((l) => l.kind === 'star');
  labels.forEach((label, i) => {
    if (label.kind !== 'label') return;
    // Items after the star are the last columns.
    const column = starAt === -1 || i < starAt ? i : columns.length - (labels.length - i);
    out[column] = label.text;
  });
  return out;
};
