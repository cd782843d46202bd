import crypto from 'node:crypto';
import { canonicalJson } from '../ledger';
import { maskSecrets } from '../shared/secrets';

/** Text an event may hold: Unicode (a lone surrogate or NUL becomes U+FFFD), at most `max` characters. */
export const eventText = (text: string, max: number) => {
  let clean = text.isWellFormed() ? text : text.toWellFormed();
  if (clean.includes('\u0000')) clean = clean.replaceAll('\u0000', '\uFFFD');
  if (clean.length <= max) return clean;
  let end = max;
  const c = clean.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${clean.slice(0, end)}…`;
};

/** Longest arguments text a call's event keeps. */
export const MAX_ARGUMENTS_CHARS = 16_000;

/**
 * A call's arguments as its event keeps them: JSON text with secrets masked (a password in a CREATE
 * DATABASE, an api_key anywhere), bounded. JSON escapes NUL and lone surrogates, so the text is
 * Unicode whatever was sent.
 */
export const argumentsText = (args: unknown) => {
  let json: string;
  try {
    json = JSON.stringify(maskSecrets(args ?? {})) ?? 'null';
  } catch {
    json = '"(arguments not JSON)"';
  }
  return eventText(json, MAX_ARGUMENTS_CHARS);
};

/**
 * A call's arguments as its event keeps them: a `query` call's statement apart (`sql`, masked as SQL
 * text is), so its readable part stays readable when an option in it held a secret (JSON text that
 * holds SQL with a secret would be sealed whole), and the rest as masked JSON text.
 */
export const argumentsOf = (target: string, args: unknown): { arguments: string; sql: string | null } => {
  if (target === 'query' && args !== null && typeof args === 'object' && !Array.isArray(args)) {
    const { query, ...rest } = args as Record<string, unknown>;
    if (typeof query === 'string')
      return {
        arguments: argumentsText(rest),
        sql: eventText(maskSecrets(query, 'sql'), MAX_ARGUMENTS_CHARS),
      };
  }
  return { arguments: argumentsText(args), sql: null };
};

/** The content of a tool result, as MCP carries it. */
export type ToolContent = { type: 'text'; text: string };

/** A tool result before its `_meta` (the record of the call) is added: what the answer hash covers. */
export type ToolAnswer = {
  content: ToolContent[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
};

/**
 * SHA-256 (hex) of a result's canonical JSON (RFC 8785, as the ledger's leaves): what the client
 * got, its `_meta` (the record of the call) left out. A client recomputes it from the result it holds.
 */
export const answerHashOf = (result: object) => {
  const { _meta: _left, ...answer } = result as Record<string, unknown>;
  void _left;
  return crypto
    .createHash('sha256')
    .update(canonicalJson(answer) ?? '', 'utf8')
    .digest('hex');
};

export type Caps = { readonly maxRows: number; readonly maxChars: number };

export type CappedTable = {
  readonly columns: readonly string[];
  readonly types: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** Rows the statement answered before the caps. */
  readonly total: number;
  readonly truncated: boolean;
};

const jsonLength = (value: unknown) => JSON.stringify(value)?.length ?? 0;

/**
 * A table within the caps: at most `maxRows` rows, and as many of those as keep its JSON within
 * `maxChars` (found by bisection: one cell may be large); `truncated` when anything was cut, here or
 * by the statement's own row limit.
 */
export const capTable = (
  table: {
    readonly column_names: readonly string[];
    readonly column_types: readonly string[];
    readonly data: readonly (readonly unknown[])[];
    readonly truncated?: true;
  },
  caps: Caps,
): CappedTable => {
  let rows = table.data.slice(0, caps.maxRows);
  const fits = (n: number) =>
    jsonLength({ column_names: table.column_names, data: rows.slice(0, n) }) <= caps.maxChars;
  if (!fits(rows.length)) {
    let low = 0;
    let high = rows.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (fits(mid)) low = mid;
      else high = mid - 1;
    }
    rows = rows.slice(0, low);
  }
  return {
    columns: table.column_names,
    types: table.column_types,
    rows,
    total: table.data.length,
    truncated: rows.length < table.data.length || table.truncated === true,
  };
};

const cellText = (value: unknown) => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  return text.replace(/\r?\n|\r/g, ' ').replace(/\|/g, '\\|');
};

/** A table as Markdown for the assistant to read (the structured content holds the same rows), bounded. */
export const tableText = (table: CappedTable, maxChars: number) => {
  const lines = [
    `| ${table.columns.map(cellText).join(' | ')} |`,
    `|${table.columns.map(() => ' --- ').join('|')}|`,
    ...table.rows.map((r) => `| ${r.map(cellText).join(' | ')} |`),
  ];
  const note = table.truncated
    ? `(${table.rows.length} rows shown; truncated: the answer had ${table.total}${table.total > table.rows.length ? '' : ' or more'} rows)`
    : `(${table.rows.length} row${table.rows.length === 1 ? '' : 's'})`;
  let text = table.columns.length > 0 ? `${lines.join('\n')}\n${note}` : note;
  if (text.length > maxChars) text = `${text.slice(0, Math.max(0, maxChars - note.length - 2))}…\n${note}`;
  return text;
};

/** An answer that is an error, as a tool result: the text for the assistant, the error as data. */
export const errorAnswer = (message: string, code: number | null = null): ToolAnswer => ({
  content: [{ type: 'text', text: message }],
  structuredContent: { type: 'error', error_code: code, error_message: message },
  isError: true,
});

/** A JSON object as a tool's answer: the same as text and as structured content, within the char cap. */
export const objectAnswer = (value: Record<string, unknown>, maxChars: number): ToolAnswer => {
  const text = JSON.stringify(value, null, 2);
  return {
    content: [{ type: 'text', text: text.length > maxChars ? `${text.slice(0, maxChars)}…` : text }],
    structuredContent: value,
    isError: false,
  };
};
