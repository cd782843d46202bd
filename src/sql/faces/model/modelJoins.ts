import { significant, textOf, tokenize } from '../../../shared/sqlTokens';

/**
 * MindsDB lets a model be joined without a condition (`FROM t JOIN proj.model AS m`, or the model
 * first: `FROM proj.model.3 AS m JOIN t`): the model pairs with each row. DuckDB requires ON or
 * USING, so `ON TRUE` is added to a join without either when the joined table is a model, or when
 * a model stands before it in the same FROM clause (and only then); the prediction step replaces
 * that join by a positional one.
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

/** A table reference after FROM or JOIN: its name's parts, where it (and its alias) ends, what follows. */
const tableReferenceAt = (tokens: Token[], from: number) => {
  let j = from;
  const parts: string[] = [];
  while (tokens[j] && (tokens[j]!.kind === 'word' || tokens[j]!.kind === 'quoted')) {
    parts.push(unquote(tokens[j]!));
    if (tokens[j + 1]?.text === '.') j += 2;
    else {
      j++;
      break;
    }
  }
  if (parts.length === 0) return null;
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
  return { parts, end, next: j };
};

/**
 * The (schema, name) a model reference may be: `name`, `project.name`, or a version of one,
 * `project.name.3` (its version quoted by then: `project.name."3"`). Anything else is no model.
 */
const modelNameOf = (parts: string[]): [string | null, string] | null => {
  if (parts.length === 3 && /^\d+$/.test(parts[2]!)) return [parts[0]!, parts[1]!];
  if (parts.length === 2) return [parts[0]!, parts[1]!];
  if (parts.length === 1) return [null, parts[0]!];
  return null;
};

export const addModelJoinConditions = async (
  sql: string,
  isModel: (schema: string | null, table: string) => Promise<boolean>,
): Promise<string> => {
  const tokens = tokensOf(sql);
  const inserts: number[] = [];
  // One lookup per distinct name: a long text may join the same table many times.
  const known = new Map<string, Promise<boolean>>();
  const modelAt = (parts: string[]) => {
    const name = modelNameOf(parts);
    if (!name) return Promise.resolve(false);
    const [schema, table] = name;
    const key = `${schema?.toLowerCase() ?? ''}\u0000${table.toLowerCase()}`;
    let found = known.get(key);
    if (!found) known.set(key, (found = isModel(schema, table)));
    return found;
  };
  // Whether a model stands earlier in the FROM clause being read (a new FROM starts afresh).
  let modelBefore = false;
  for (let k = 0; k < tokens.length; k++) {
    const keyword = tokens[k]!.kind === 'word' ? tokens[k]!.text.toUpperCase() : '';
    if (keyword !== 'JOIN' && keyword !== 'FROM') continue;
    const ref = tableReferenceAt(tokens, k + 1);
    if (keyword === 'FROM') {
      modelBefore = ref ? await modelAt(ref.parts) : false;
      continue;
    }
    if (!ref) continue;
    const joinedModel = await modelAt(ref.parts);
    const after = tokens[ref.next];
    const conditioned = after && after.kind === 'word' && ['ON', 'USING'].includes(after.text.toUpperCase());
    if (!conditioned && (joinedModel || modelBefore)) inserts.push(ref.end);
    modelBefore ||= joinedModel;
  }
  let out = sql;
  for (const at of inserts.reverse()) out = `${out.slice(0, at)} ON TRUE${out.slice(at)}`;
  return out;
};
