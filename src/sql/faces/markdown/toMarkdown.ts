import { VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { callsFunction, eachNode, isNode, serializedConstantOf, type AstNode } from '../../pipeline/ast';
import { SqlError, SqlErrorCode } from '../../errors';
import { isDocumentKind } from '../../../engines/documents/types';

/**
 * MindsDB's `TO_MARKDOWN(<document>)`: a document's text as markdown. The document is a constant
 * of the statement (an uploaded file, `files.<name>` or its name as text, or an http(s) URL), so
 * each call is converted before the query reads, and read by the query from a variable of the
 * connection in the call's place. No LLM: the document's own text layer (src/engines/documents).
 */
type MarkdownSource = { kind: 'file'; name: string } | { kind: 'url'; url: string };

export type MarkdownFunctionPlan = {
  /** The distinct documents the statement converts; the i-th is read from `variableOf(i)`. */
  readonly sources: readonly MarkdownSource[];
};

/** What converting a statement's documents needs (filled by the SQL service, src/sql/service.ts). */
export type MarkdownSources = {
  /** An uploaded file's format and table (undefined: no such file). */
  file(name: string): Promise<{ format: string; table: string } | undefined>;
  /** The document at a URL as markdown, fetched through the outbound policy. */
  url(url: string, signal: AbortSignal): Promise<string>;
};

/** Documents one statement may convert. */
const MAX_SOURCES = 16;
const variableOf = (i: number) => `__mindledger_markdown_${i}`;

const TO_MARKDOWN: ReadonlySet<string> = new Set(['to_markdown']);

/** The calls in the tree (their arguments not searched: a call in a call is refused by its argument). */
const callsIn = (tree: unknown): AstNode[] => {
  const calls: AstNode[] = [];
  eachNode(tree, (n) => {
    if (!callsFunction(n, TO_MARKDOWN)) return true;
    calls.push(n);
    return false;
  });
  return calls;
};

/** Whether the statement calls `TO_MARKDOWN()` anywhere. */
export const treeCallsToMarkdown = (statement: AstNode) => callsIn(statement).length > 0;

const USAGE =
  "TO_MARKDOWN() takes one document: an uploaded file (files.<name>, or its name as text) or an http(s) URL, as a constant (TO_MARKDOWN('https://…/report.pdf'))";

/** A call's document. */
const sourceOf = (call: AstNode): MarkdownSource => {
  const args = Array.isArray(call.children) ? call.children.filter(isNode) : [];
  const [arg] = args;
  if (args.length !== 1 || !arg || call.distinct || call.filter)
    throw new SqlError(SqlErrorCode.Invalid, USAGE);
  if (arg.class === 'COLUMN_REF') {
    const names = Array.isArray(arg.column_names) ? arg.column_names.map(String) : [];
    if (names.length === 2 && names[0]!.toLowerCase() === 'files') return { kind: 'file', name: names[1]! };
  }
  if (arg.class === 'CONSTANT') {
    const value = serializedConstantOf(arg);
    if (!value.is_null && value.type.id === 'VARCHAR') {
      const text = String(value.value);
      if (/^https?:\/\//i.test(text)) return { kind: 'url', url: text };
      return { kind: 'file', name: text.replace(/^files\./i, '') };
    }
  }
  throw new SqlError(SqlErrorCode.Invalid, USAGE);
};

const keyOf = (s: MarkdownSource) => (s.kind === 'file' ? `file:${s.name.toLowerCase()}` : `url:${s.url}`);

/**
 * Rewrites each `TO_MARKDOWN(x)` of the statement, in place, into a read of the variable its
 * document's markdown will be in (`getvariable('…')`); answers the
 * documents to convert, or null when the statement calls none. The column keeps its name: answers
 * are labelled from the text as written (src/shared/sqlLabels.ts).
 */
export const planToMarkdown = (statement: AstNode): MarkdownFunctionPlan | null => {
  const calls = callsIn(statement);
  if (calls.length === 0) return null;
  const keys: string[] = [];
  const sources: MarkdownSource[] = [];
  for (const call of calls) {
    const source = sourceOf(call);
    let i = keys.indexOf(keyOf(source));
    if (i < 0) {
      i = keys.push(keyOf(source)) - 1;
      sources.push(source);
    }
    if (sources.length > MAX_SOURCES)
      throw new SqlError(
        SqlErrorCode.TooLarge,
        `TO_MARKDOWN() converts at most ${MAX_SOURCES} documents in one query`,
      );
    call.function_name = 'getvariable';
    call.children = [
      {
        class: 'CONSTANT',
        type: 'VALUE_CONSTANT',
        alias: '',
        query_location: call.query_location,
        value: { type: { id: 'VARCHAR', type_info: null }, is_null: false, value: variableOf(i) },
      },
    ];
  }
  return { sources };
};

/** An uploaded document's markdown: its sections' text, in order, read on the query's connection. */
const fileMarkdown = async (c: DuckDBConnection, sources: MarkdownSources, name: string) => {
  const file = await sources.file(name);
  if (!file) throw new SqlError(SqlErrorCode.UnknownTable, `TO_MARKDOWN(): there is no file files.${name}`);
  if (!isDocumentKind(file.format))
    throw new SqlError(
      SqlErrorCode.Invalid,
      `TO_MARKDOWN(): files.${name} is a ${file.format} table, not a document (PDF, DOCX, HTML, Markdown or text)`,
    );
  const reader = await c.runAndReadAll(
    `SELECT coalesce(string_agg(content, chr(10) || chr(10) ORDER BY section), '') FROM ${file.table}`,
  );
  return String(reader.getRowsJS()[0]![0]);
};

/**
 * Before the query reads: each document converted (an uploaded file read, a URL fetched and
 * converted) and its markdown put in its variable. `check(name)`: the caller's table policy on a
 * file (an agent's SQL tool reads its skill's tables only). Returns what clears the variables.
 */
export const answerMarkdownCalls = async (
  c: DuckDBConnection,
  plan: MarkdownFunctionPlan,
  sources: MarkdownSources,
  options: { check(file: string): void; signal: AbortSignal },
) => {
  const set: string[] = [];
  const clear = async () => {
    for (const name of set) await c.run(`RESET VARIABLE ${name}`);
  };
  try {
    for (const [i, source] of plan.sources.entries()) {
      if (source.kind === 'file') options.check(source.name);
      const markdown =
        source.kind === 'file'
          ? await fileMarkdown(c, sources, source.name)
          : await sources.url(source.url, options.signal);
      const prepared = await c.prepare(`SET VARIABLE ${variableOf(i)} = $1`);
      prepared.bindValue(1, markdown, VARCHAR);
      await prepared.run();
      set.push(variableOf(i));
    }
  } catch (error) {
    await clear();
    throw error;
  }
  return clear;
};
