import { significant, textOf, tokenize } from '../shared/sqlTokens';

/**
 * MindsDB lets a model be joined without a condition (`FROM t JOIN proj.model AS m`): the model
 * pairs with each row. DuckDB requires ON or USING, so `ON TRUE` is added after a joined table that
 * is a model (and only then); the prediction step replaces that join by a positional one.
 */
type Token = { text: string; start: number; end: number; kind: 'word' | 'quoted' | 'string' | 'other' };

/** The significant tokens of DuckDB-dialect text, with their text. */
const tokensOf = (sql: string): Token[] =>
  significant(tokenize(sql, 'duckdb')).map((t) => ({
    text: textOf(sql, t),
    start: t.start,
    end: t.end,
    kind:
      t.kind === 'word'
        ? 'word'
        : t.kind === 'identifier'
          ? 'quoted'
          : t.kind === 'string'
            ? 'string'
            : 'other',
  }));

const FOLLOWERS = new Set([
  'ON',
  'USING',
  'WHERE',
  'LIMIT',
  'GROUP',
  'ORDER',
  'JOIN',
  'LEFT',
  'RIGHT',
  'INNER',
  'CROSS',
  'FULL',
  'NATURAL',
  'POSITIONAL',
  'HAVING',
  'UNION',
  'WINDOW',
  'QUALIFY',
  'OFFSET',
  'EXCEPT',
  'INTERSECT',
]);

const unquote = (t: Token) => (t.kind === 'quoted' ? t.text.slice(1, -1).replace(/""/g, '"') : t.text);

export const addModelJoinConditions = async (
  sql: string,
  isModel: (schema: string | null, table: string) => Promise<boolean>,
): Promise<string> => {
  const tokens = tokensOf(sql);
  const inserts: number[] = [];
  // One lookup per distinct name: a long text may join the same table many times.
  const known = new Map<string, Promise<boolean>>();
  const modelAt = (schema: string | null, table: string) => {
    const key = `${schema?.toLowerCase() ?? ''}\u0000${table.toLowerCase()}`;
    let found = known.get(key);
    if (!found) known.set(key, (found = isModel(schema, table)));
    return found;
  };
  for (let k = 0; k < tokens.length; k++) {
    if (tokens[k]!.kind !== 'word' || tokens[k]!.text.toUpperCase() !== 'JOIN') continue;
    let j = k + 1;
    const parts: string[] = [];
    while (tokens[j] && (tokens[j]!.kind === 'word' || tokens[j]!.kind === 'quoted')) {
      parts.push(unquote(tokens[j]!));
      if (tokens[j + 1]?.text === '.') j += 2;
      else {
        j++;
        break;
      }
    }
    if (parts.length === 0 || parts.length > 2) continue;
    let end = tokens[j - 1]!.end;
    const next = tokens[j];
    if (next && next.kind === 'word' && next.text.toUpperCase() === 'AS' && tokens[j + 1]) {
      end = tokens[j + 1]!.end;
      j += 2;
    } else if (
      next &&
      (next.kind === 'quoted' || (next.kind === 'word' && !FOLLOWERS.has(next.text.toUpperCase())))
    ) {
      end = next.end;
      j++;
    }
    const after = tokens[j];
    if (after && after.kind === 'word' && ['ON', 'USING'].includes(after.text.toUpperCase())) continue;
    const [schema, table] = parts.length === 2 ? [parts[0]!, parts[1]!] : [null, parts[0]!];
    if (await modelAt(schema, table)) inserts.push(end);
  }
  let out = sql;
  for (const at of inserts.reverse()) out = `${out.slice(0, at)} ON TRUE${out.slice(at)}`;
  return out;
};
