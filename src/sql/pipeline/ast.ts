import type { DuckDBConnection } from '@duckdb/node-api';
import { scalarOn } from '../../duckdb/scalar';
import { PLAIN_NAME } from '../../shared/names';
import { quoteIdent } from '../../shared/quoting';
import { significant, textOf, tokenize, unquoted, type Token } from '../../shared/sqlTokens';
import { SqlError, SqlErrorCode } from '../errors';
import { withRenames, type TokenRename } from './literalShape';

export type AstNode = { [key: string]: unknown };

/*
 * Typed reads of DuckDB's tree. Its JSON is typed only as nodes of unknown fields: these accessors
 * check what a field holds instead of asserting it, so a tree of another shape (a DuckDB upgrade)
 * reads as absent, or fails as an internal error naming the field, never as a TypeError later on.
 */

/** Whether a tree value is a node: an object, not a list. */
export const isNode = (value: unknown): value is AstNode =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether a tree value is a list of nodes (and nothing else). */
const isNodeList = (value: unknown): value is AstNode[] => Array.isArray(value) && value.every(isNode);

const missing = (node: AstNode, key: string, what: string) =>
  new SqlError(
    SqlErrorCode.Internal,
    `DuckDB's syntax tree has no ${what} '${key}' in a ${String(node.class ?? node.type ?? 'statement')} node`,
  );

/** The node under `key`; undefined when the field is absent, null or not a node. */
export const nodeAt = (node: AstNode | null | undefined, key: string): AstNode | undefined => {
  const value = node?.[key];
  return isNode(value) ? value : undefined;
};

/** The node under `key`, which DuckDB's tree always holds there: its absence is an internal error. */
export const requiredNodeAt = (node: AstNode, key: string): AstNode => {
  const value = node[key];
  if (!isNode(value)) throw missing(node, key, 'node');
  return value;
};

/** The nodes of the list under `key`, to read: empty when the field is absent, anything not a node left out. */
export const nodesAt = (node: AstNode | null | undefined, key: string): AstNode[] => {
  const value = node?.[key];
  return Array.isArray(value) ? value.filter(isNode) : [];
};

/**
 * The list under `key` itself, to edit in place, which DuckDB's tree always holds there: its
 * absence (or anything in it not a node) is an internal error.
 */
export const requiredNodesAt = (node: AstNode, key: string): AstNode[] => {
  const value = node[key];
  if (!isNodeList(value)) throw missing(node, key, 'list of nodes');
  return value;
};

/** The strings of the list under `key` (a COLUMN_REF's `column_names`): empty when the field is absent. */
export const stringsAt = (node: AstNode | null | undefined, key: string): string[] => {
  const value = node?.[key];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
};

/** A CONSTANT node's `value` as DuckDB serialises it (numbers beyond 2^53 still marked, DECIMALs unscaled). */
export type SerializedConstant = { is_null: boolean; value: unknown; type: AstNode & { id: string } };

const isSerializedConstant = (value: unknown): value is SerializedConstant =>
  isNode(value) &&
  typeof value.is_null === 'boolean' &&
  isNode(value.type) &&
  typeof value.type.id === 'string';

/** A CONSTANT node's serialised value, which DuckDB's tree always holds: its absence is an internal error. */
export const serializedConstantOf = (node: AstNode): SerializedConstant => {
  const value = node.value;
  if (!isSerializedConstant(value)) throw missing(node, 'value', 'constant');
  return value;
};

// JSON numbers beyond 2^53 (query locations, BIGINT literals) would be rounded by JSON.parse: they
// travel through the tree as marked strings and are put back verbatim.
const BIG = '__mindledger_big__';
const protectBigNumbers = (json: string) =>
  json.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,}\]])/g, `$1"${BIG}$2"`);
const restoreBigNumbers = (json: string) => json.replace(new RegExp(`"${BIG}(-?\\d+)"`, 'g'), '$1');

/**
 * SELECTs (UNION branches, subqueries, CTE bodies) a query may hold. DuckDB plans a UNION ALL of
 * n branches in time that grows faster than n² and does not stop for an interrupt while it does
 * (5,000 branches: 1.6 s, 10,000: 10 s, 20,000: 97 s); its own max_expression_depth (1000)
 * bounds joins and nested subqueries but not set operations.
 */
export const MAX_QUERY_BLOCKS = 1000;

const tooManySelects = () =>
  new SqlError(
    SqlErrorCode.TooLarge,
    `The query holds more than ${MAX_QUERY_BLOCKS} SELECTs (UNION branches, subqueries, CTEs); split it, or send rows as VALUES or a list parameter`,
  );

/**
 * Counted in the serialised tree before it is parsed into objects (20,000 branches are 12 MB of
 * JSON). The marker cannot occur inside a string value, where its quotes would be escaped.
 */
const refuseTooManySelects = (json: string) => {
  const marker = '"type":"SELECT_NODE"';
  let count = 0;
  for (let at = json.indexOf(marker); at !== -1; at = json.indexOf(marker, at + marker.length))
    if (++count > MAX_QUERY_BLOCKS) throw tooManySelects();
};

const SERIALIZE = 'SELECT json_serialize_sql($1::VARCHAR)';
const DESERIALIZE = 'SELECT json_deserialize_sql($1::JSON)';

/** DuckDB's own parser: a SELECT becomes its syntax tree; anything else is refused by the parser. */
export const parseSelect = async (c: DuckDBConnection, sql: string): Promise<AstNode> => {
  // A SELECT the service has not seen is parsed before its run: one trip to DuckDB (see printSelect).
  const raw = String(await scalarOn(c, SERIALIZE, sql));
  refuseTooManySelects(raw);
  const protectedJson = protectBigNumbers(raw);
  const parsed = JSON.parse(protectedJson) as {
    error: boolean;
    error_type?: string;
    error_message?: string;
    statements?: AstNode[];
  };
  if (parsed.error) {
    if (/Only SELECT statements/i.test(parsed.error_message ?? ''))
      throw new SqlError(
        SqlErrorCode.Forbidden,
        'Only SELECT queries and MindsDB statements are allowed: resources change through CREATE/UPDATE/DROP of projects, databases, skills, agents and chatbots',
      );
    throw new SqlError(SqlErrorCode.Syntax, parsed.error_message ?? 'The query does not parse');
  }
  const statements = parsed.statements ?? [];
  if (statements.length !== 1)
    throw new SqlError(SqlErrorCode.Syntax, `One statement per request, got ${statements.length}`);
  parsedFrom.set(statements[0]!, { text: sql, tree: protectedJson });
  return statements[0]!;
};

/**
 * The statement as text DuckDB runs. Its own printing is a trip to DuckDB's threads and the
 * tree's JSON read again (0.4-1.2 ms of a SELECT the service has not seen, on two shared cores):
 * a tree whose only change since it was parsed is the tables name resolution put in place of the
 * names it read (`readLocally`: information_schema's, a project's tables) is its own text with
 * those names replaced instead (`textWithTablesRenamed`), which parses to the same tree.
 */
export const printSelect = async (c: DuckDBConnection, statement: AstNode): Promise<string> =>
  (await printSelectRenaming(c, statement)).text;

/**
 * `printSelect`, and when the text is the parsed one with tables renamed, the tokens renamed
 * (significant tokens of the parsed text): a text of the same literal shape is renamed alike
 * (src/sql/pipeline/literalShape.ts).
 */
export const printSelectRenaming = async (
  c: DuckDBConnection,
  statement: AstNode,
): Promise<{ text: string; renames?: readonly TokenRename[] }> => {
  const keywords = await keywordsOf(c);
  const renamed = keywords && textWithTablesRenamed(statement, keywords);
  if (renamed !== undefined) return renamed;
  const json = restoreBigNumbers(JSON.stringify({ error: false, statements: [statement] }));
  return { text: String(await scalarOn(c, DESERIALIZE, json)) };
};

/** DuckDB's keywords, lower-case: read once per process (again after a read that failed). */
let keywords: Promise<ReadonlySet<string> | undefined> | undefined;
const keywordsOf = (c: DuckDBConnection) =>
  (keywords ??= c.runAndReadAll('SELECT keyword_name FROM duckdb_keywords()').then(
    (reader) => new Set(reader.getRows().map(([keyword]) => String(keyword).toLowerCase())),
    () => (keywords = undefined),
  ));

/**
 * A name as DuckDB prints it: quoted when it is not a plain word or is one of its keywords (so
 * messages quoting the query read as they did when DuckDB printed it, `FROM mindsdb.skills`).
 */
const printedName = (name: string, keywords: ReadonlySet<string>) =>
  PLAIN_NAME.test(name) && !keywords.has(name.toLowerCase()) ? name : quoteIdent(name);

/** Per statement `parseSelect` made: the text it parsed, and its tree then (JSON, big numbers marked). */
const parsedFrom = new WeakMap<AstNode, { text: string; tree: string }>();

/** A table reference's name fields in DuckDB's tree, outermost first. */
const NAME_FIELDS: readonly string[] = ['catalog_name', 'schema_name', 'table_name'];

/** A table reference renamed: where its name begins in the text (UTF-8 bytes), its parts then and now. */
type Renamed = { at: unknown; was: string[] | undefined; now: string[] | undefined };

/** A reference's name as its parts are written (`t`, `schema.t`, `catalog.schema.t`); undefined if no text spells it. */
const nameParts = (table: AstNode): string[] | undefined => {
  const fields = NAME_FIELDS.map((field) => table[field]);
  if (!fields.every((f): f is string => typeof f === 'string')) return undefined;
  const parts = fields.slice(
    Math.max(
      0,
      fields.findIndex((f) => f !== ''),
    ),
  );
  return parts.every((p) => p !== '') ? parts : undefined;
};

/** Whether `now` is the tree `was` but for the names of table references (BASE_TABLE), each renamed one noted. */
const sameButNames = (was: unknown, now: unknown, renamed: Renamed[]): boolean => {
  if (was === now) return true;
  if (Array.isArray(was))
    return (
      Array.isArray(now) && was.length === now.length && was.every((w, i) => sameButNames(w, now[i], renamed))
    );
  if (!isNode(was) || !isNode(now)) return false;
  const keys = Object.keys(was);
  if (keys.length !== Object.keys(now).length) return false;
  const table = was.type === 'BASE_TABLE' && now.type === 'BASE_TABLE';
  let named = false;
  for (const key of keys) {
    if (!(key in now)) return false;
    if (table && NAME_FIELDS.includes(key)) named ||= was[key] !== now[key];
    else if (!sameButNames(was[key], now[key], renamed)) return false;
  }
  if (named) renamed.push({ at: was.query_location, was: nameParts(was), now: nameParts(now) });
  return true;
};

/** The index of the token starting at `start` (tokens in order), or -1. */
const tokenAt = (tokens: readonly Token[], start: number) => {
  let low = 0;
  let high = tokens.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const s = tokens[mid]!.start;
    if (s === start) return mid;
    if (s < start) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
};

const isName = (t: Token | undefined): t is Token => t?.kind === 'word' || t?.kind === 'identifier';

/**
 * The tokens of the name `parts` written from `start` (`a.b`, `a . "b"`): undefined when the
 * text spells another name there.
 */
const nameTokensAt = (text: string, tokens: readonly Token[], start: number, parts: readonly string[]) => {
  const found: Token[] = [];
  for (let i = tokenAt(tokens, start); found.length < parts.length; i += 2) {
    const t = tokens[i];
    if (!isName(t) || (found.length > 0 && textOf(text, tokens[i - 1]!) !== '.')) return undefined;
    if ((t.kind === 'identifier' ? unquoted(text, t) : textOf(text, t)) !== parts[found.length])
      return undefined;
    found.push(t);
  }
  return found;
};

/**
 * The text `statement` was parsed from with its tables' new names in place of those it read,
 * when nothing else in its tree changed since (see `printSelect`). Undefined when something did,
 * when the text does not spell a table's old name where DuckDB located it, or when it holds a
 * comment or a `;` (DuckDB's print has neither, and a caller may put it in parentheses).
 */
const textWithTablesRenamed = (
  statement: AstNode,
  keywords: ReadonlySet<string>,
): { text: string; renames: TokenRename[] } | undefined => {
  const source = parsedFrom.get(statement);
  if (!source) return undefined;
  const renamed: Renamed[] = [];
  const parsed = (JSON.parse(source.tree) as { statements: unknown[] }).statements[0];
  if (!sameButNames(parsed, statement, renamed)) return undefined;
  const { text } = source;
  let tokens: readonly Token[];
  try {
    tokens = tokenize(text, 'duckdb');
  } catch {
    return undefined;
  }
  if (tokens.some((t) => t.kind === 'comment' || (t.kind === 'symbol' && text[t.start] === ';')))
    return undefined;
  const words = significant(tokens);
  // DuckDB locates in bytes of UTF-8; the text is indexed in UTF-16 units.
  const utf8 = Buffer.byteLength(text, 'utf8') === text.length ? undefined : Buffer.from(text, 'utf8');
  const renames: TokenRename[] = [];
  for (const { at, was, now } of renamed) {
    if (typeof at !== 'number' || !was || !now) return undefined;
    const start = utf8 ? utf8.subarray(0, at).toString('utf8').length : at;
    const name = nameTokensAt(text, words, start, was);
    if (!name) return undefined;
    const first = tokenAt(words, name[0]!.start);
    renames.push({
      first,
      last: first + 2 * (name.length - 1),
      name: now.map((part) => printedName(part, keywords)).join('.'),
    });
  }
  return { text: withRenames(text, renames), renames };
};

/**
 * A CONSTANT node's value as JavaScript: DECIMAL literals (`0.5` is DECIMAL(2,1), stored as 5)
 * scaled back, numbers beyond 2^53 as their digits.
 */
export const constantValue = (node: AstNode): unknown => {
  const v = serializedConstantOf(node);
  if (v.is_null) return null;
  if (v.type.id === 'DECIMAL') return Number(decimalDigitsOf(v));
  return rawValueOf(v);
};

/** A serialised constant's value, a whole number past 2^53 as its digits (see `protectBigNumbers`). */
const rawValueOf = (v: SerializedConstant) =>
  typeof v.value === 'string' && v.value.startsWith(BIG) ? v.value.slice(BIG.length) : v.value;

/**
 * A DECIMAL constant's digits at its scale (`2.50`, `-0.125`): DuckDB's tree holds it scaled to a
 * whole number (250 with scale 2), which read as it stands is another number. A wide DECIMAL's
 * value (two 64-bit halves) gives no digits: `[object Object]`, which no caller takes for a number.
 */
export const decimalDigitsOf = (v: SerializedConstant): string => {
  const scaleField = nodeAt(v.type, 'type_info')?.scale;
  const scale = typeof scaleField === 'number' ? scaleField : 0;
  const digits = String(rawValueOf(v));
  if (scale === 0) return digits;
  const negative = digits.startsWith('-');
  const padded = (negative ? digits.slice(1) : digits).padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
};

export { tooManySelects };

/**
 * Visits every node of the tree depth first, in tree order, synchronously and without recursion: a
 * statement at SQL_MAX_QUERY_BYTES is a tree of hundreds of thousands of nodes, asked about on
 * every query. `visit` answering false leaves that node's fields unvisited.
 */
export const eachNode = (tree: unknown, visit: (n: AstNode) => boolean | void): void => {
  const pending: unknown[] = [tree];
  while (pending.length > 0) {
    const value = pending.pop();
    const children = Array.isArray(value)
      ? value
      : isNode(value) && visit(value) !== false
        ? Object.values(value)
        : [];
    // Pushed last first, so they are visited in order.
    for (let i = children.length - 1; i >= 0; i--) {
      const child: unknown = children[i];
      if (child !== null && typeof child === 'object') pending.push(child);
    }
  }
};

/** Whether `n` calls one of the functions `names` (lower case), unqualified (`schema.f()` is another function). */
export const callsFunction = (n: AstNode, names: ReadonlySet<string>) =>
  n.class === 'FUNCTION' && !n.schema && !n.catalog && names.has(String(n.function_name).toLowerCase());

/** Visits every object in the tree (depth first), letting the visitor replace fields in place. */
export const walk = async (node: unknown, visit: (n: AstNode) => Promise<void> | void): Promise<void> => {
  if (Array.isArray(node)) {
    for (const child of node) await walk(child, visit);
    return;
  }
  if (!isNode(node)) return;
  await visit(node);
  for (const value of Object.values(node)) await walk(value, visit);
};

/** One AND-ed condition of a WHERE clause, with a way to put another condition (TRUE) in its place. */
export type Conjunct = { condition: AstNode; replace: (by: AstNode) => void };

/** The AND-ed conditions of `where`, in order (a lone condition is its own); `replaceWhole` replaces a lone one. */
export const replaceableConjuncts = (
  where: AstNode | null | undefined,
  replaceWhole: (by: AstNode) => void,
): Conjunct[] => {
  const out: Conjunct[] = [];
  const visit = (n: AstNode | null | undefined, replace: (by: AstNode) => void) => {
    if (!n) return;
    if (n.class === 'CONJUNCTION' && n.type === 'CONJUNCTION_AND') {
      const children = requiredNodesAt(n, 'children');
      children.forEach((child, i) => visit(child, (by) => (children[i] = by)));
    } else out.push({ condition: n, replace });
  };
  visit(where, replaceWhole);
  return out;
};

/** The conjuncts of an AND (a lone condition is its own). */
export const conjunctsOf = (where: AstNode | null | undefined): AstNode[] =>
  replaceableConjuncts(where, () => undefined).map((c) => c.condition);
