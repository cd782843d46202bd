import { significant, textOf, tokenize, type Token } from '../../shared/sqlTokens';

/**
 * Texts that differ only in whole-number literals (`HAVING count(*) > 5` and `… > 6`, `LIMIT 10`
 * and `LIMIT 20`) plan alike: name resolution reads names, and of the constants only the select
 * list's unaliased strings and NULLs (which name their columns), never a whole number. A local plan
 * whose text is the client's with table names put in place (`printSelect`, nothing else changed)
 * is kept by the text's shape too, and a text of the same shape is planned from it without DuckDB's
 * parse or the name resolution: the same tokens renamed in its own text. DuckDB still prepares that
 * exact text, its literals included, so what they mean (`ORDER BY 1`, the type a literal infers) is
 * DuckDB's as before. Only plain whole numbers count: not a part of a dotted name or a decimal
 * (`t.1`, `0.5`), nor a `$1`.
 */

/** A table's name put in place of significant tokens `first` to `last` of the planned text. */
export type TokenRename = { readonly first: number; readonly last: number; readonly name: string };

const WHOLE_NUMBER = /^\d{1,18}$/;
/** Stands for a whole number in a shape: a text holding it has no shape. */
const BLANK = '\u0000';

const isSymbol = (sql: string, t: Token | undefined, chars: string) =>
  t?.kind === 'symbol' && chars.includes(sql[t.start]!);

/** Whether significant token `i` is a whole-number literal (see above). */
const isWholeNumber = (sql: string, words: readonly Token[], i: number) => {
  const t = words[i]!;
  return (
    t.kind === 'word' &&
    WHOLE_NUMBER.test(textOf(sql, t)) &&
    !isSymbol(sql, words[i - 1], '.$') &&
    !isSymbol(sql, words[i + 1], '.')
  );
};

/** The text with its whole-number literals blanked; undefined when it has none (or holds the blank). */
export const literalShape = (sql: string): string | undefined => {
  if (sql.includes(BLANK)) return undefined;
  let words: readonly Token[];
  try {
    words = significant(tokenize(sql, 'duckdb'));
  } catch {
    return undefined;
  }
  let shape = '';
  let from = 0;
  for (let i = 0; i < words.length; i++) {
    if (!isWholeNumber(sql, words, i)) continue;
    shape += sql.slice(from, words[i]!.start) + BLANK;
    from = words[i]!.end;
  }
  return from === 0 ? undefined : shape + sql.slice(from);
};

/** `sql` with each rename's tokens replaced by its name (as `printSelect` renamed its text). */
export const withRenames = (sql: string, renames: readonly TokenRename[]): string => {
  const words = significant(tokenize(sql, 'duckdb'));
  let out = sql;
  for (const r of [...renames].sort((a, b) => b.first - a.first))
    out = out.slice(0, words[r.first]!.start) + r.name + out.slice(words[r.last]!.end);
  return out;
};
