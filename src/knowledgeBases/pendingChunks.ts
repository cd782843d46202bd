import {
  ARRAY,
  arrayValue,
  BIGINT,
  FLOAT,
  INTEGER,
  LIST,
  listValue,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { KnowledgeBaseDocumentsInserted } from '../../events';
import { appendColumns } from '../duckdb/appendColumns';
import { chunkText } from '../engines/search/chunker';
import { chunkId, chunkRowId, KB_SCHEMA, kbTableNames, kbTables } from '../engines/search/layout';
import { termsOf } from '../engines/search/terms';
import type { BatchScope } from '../projection/types';
import { DELETED_KBS, type HeldContent, type KnownContentTables } from './contentTables';

/** A document as inserted: what the documents blob holds, one JSON line each. */
export type KbDocument = { id: string; content: string; metadata: Record<string, unknown> };

/** The chunks of documents, in order, as an insert and its replay both cut them. */
export const chunksOf = (
  documents: readonly KbDocument[],
  chunking: KnowledgeBaseDocumentsInserted['data']['chunking'],
) =>
  documents.flatMap((doc) => {
    const pieces = chunkText(doc.content, chunking);
    return pieces.map((piece, index) => ({
      doc,
      index,
      id: chunkId(doc.id, index, pieces.length, piece.start, piece.end),
      content: piece.content,
    }));
  });

/** A chunk as an insert cuts it. */
export type Chunk = ReturnType<typeof chunksOf>[number];

/** One insert's chunks with their vectors, and the position of its event (their row ids: layout.ts `chunkRowId`). */
type Part = {
  readonly position: bigint;
  readonly chunks: readonly Chunk[];
  readonly vectors: readonly Float32Array[];
  /**
   * The places of its chunks deleted (or replaced) before they were appended: they are not written,
   * but their terms still join the vocabulary, as when they were appended and then deleted.
   */
  gone?: Set<number>;
};

/** What waits to be appended to one knowledge base's tables. */
type Waiting = {
  readonly dimensions: number;
  readonly parts: Part[];
  readonly docIds: Set<string>;
  chunks: number;
};

/** Past this many chunks waiting for one knowledge base, they are appended at once (memory stays bounded). */
const MAX_WAITING_CHUNKS = 20_000;

/** The types of a chunk's row, of a term's row and of a vocabulary row, in the order of their tables' columns (layout.ts). */
const CHUNK_TYPES = (dimensions: number) => [
  VARCHAR,
  VARCHAR,
  INTEGER,
  VARCHAR,
  VARCHAR,
  INTEGER,
  BIGINT,
  ARRAY(FLOAT, dimensions),
  BIGINT,
];
const TERM_TYPES = [BIGINT, INTEGER, INTEGER, INTEGER];
const VOCABULARY_TYPES = [VARCHAR, INTEGER];

/**
 * The ids of the terms of chunks about to be appended: those of the vocabulary, read for these
 * terms only (or found in it as held: contentTables.ts), and new ones numbered on from the
 * vocabulary's highest in the order the chunks first have them (`terms`, distinct, in that order),
 * so a rebuild numbers them alike whatever its batches.
 */
const termIds = async (
  c: DuckDBConnection,
  kbId: number,
  terms: readonly string[],
  held: HeldContent | undefined,
) => {
  if (held) {
    const ids = new Map<string, number>();
    const added: string[] = [];
    let next = held.vocabulary.size;
    for (const term of terms) {
      const id = held.vocabulary.get(term);
      if (id !== undefined) ids.set(term, id);
      else {
        ids.set(term, next++);
        added.push(term);
      }
    }
    return { ids, added };
  }
  const vocabulary = kbTables(kbId).vocabulary;
  const known = await c.runAndReadAll(
    `SELECT TERM, TERM_ID FROM ${vocabulary} WHERE TERM IN (SELECT unnest($terms))
     UNION ALL SELECT NULL, max(TERM_ID) FROM ${vocabulary}`,
    { terms: listValue([...terms]) },
    { terms: LIST(VARCHAR) },
  );
  const ids = new Map<string, number>();
  let next = 0;
  for (const [term, id] of known.getRows() as [string | null, number | null][])
    if (term === null) next = id === null ? 0 : id + 1;
    else ids.set(term, id!);
  const added: string[] = [];
  for (const term of terms)
    if (!ids.has(term)) {
      ids.set(term, next++);
      added.push(term);
    }
  return { ids, added };
};

/**
 * Appends the parts' chunks, their terms and the terms new to the vocabulary, in order: three
 * appenders in all (two when no term is new). What a held knowledge base holds is told to `known`.
 */
const appendChunks = async (
  c: DuckDBConnection,
  known: KnownContentTables,
  kbId: number,
  dimensions: number,
  parts: readonly Part[],
) => {
  const chunks: Chunk[] = [];
  const vectors: Float32Array[] = [];
  const positions: bigint[] = [];
  const rowIds: bigint[] = [];
  // Each chunk's terms, in the order its words first come (`chunkTerms`: the chunks written); the
  // distinct terms in the order the chunks first have them, those deleted before their append too.
  const chunkTerms: Map<string, number>[] = [];
  const distinct = new Set<string>();
  for (const part of parts)
    part.chunks.forEach((chunk, i) => {
      const terms = termsOf(chunk.content);
      for (const term of terms.keys()) distinct.add(term);
      if (part.gone?.has(i)) return;
      chunkTerms.push(terms);
      chunks.push(chunk);
      vectors.push(part.vectors[i]!);
      positions.push(part.position);
      rowIds.push(chunkRowId(part.position, i));
    });
  let postings = 0;
  for (const terms of chunkTerms) postings += terms.size;
  const { ids, added } = await termIds(c, kbId, [...distinct], known.held(kbId));
  // The postings (chunk, term id, TF, the chunk's length) as typed columns: tens a chunk, so no object each.
  const postingChunk = new Int32Array(postings);
  const postingTerm = new Int32Array(postings);
  const postingTf = new Int32Array(postings);
  const termCounts = new Int32Array(chunks.length);
  let at = 0;
  chunkTerms.forEach((terms, i) => {
    for (const [term, tf] of terms) {
      postingChunk[at] = i;
      postingTerm[at] = ids.get(term)!;
      postingTf[at++] = tf;
      termCounts[i]! += tf;
    }
  });
  // Each column of a posting's row, in the table's order (TERM_TYPES).
  const termColumns: readonly ((k: number) => DuckDBValue)[] = [
    (k) => rowIds[postingChunk[k]!]!,
    (k) => postingTerm[k]!,
    (k) => postingTf[k]!,
    (k) => termCounts[postingChunk[k]!]!,
  ];
  // Each column of a chunk's row, in the table's order (CHUNK_TYPES).
  const chunkColumns: readonly ((row: number) => DuckDBValue)[] = [
    (row) => chunks[row]!.id,
    (row) => chunks[row]!.doc.id,
    (row) => chunks[row]!.index,
    (row) => chunks[row]!.content,
    (row) => JSON.stringify(chunks[row]!.doc.metadata),
    (row) => termCounts[row]!,
    (row) => positions[row]!,
    (row) => arrayValue(Array.from(vectors[row]!)),
    (row) => rowIds[row]!,
  ];
  const names = kbTableNames(kbId);
  // No appender for a table given no row (every chunk deleted before its append, no term new).
  const chunkAppender = chunks.length > 0 ? await c.createAppender(names.chunks, KB_SCHEMA) : null;
  const termAppender = postings > 0 ? await c.createAppender(names.terms, KB_SCHEMA) : null;
  const vocabularyAppender = added.length > 0 ? await c.createAppender(names.vocabulary, KB_SCHEMA) : null;
  try {
    if (chunkAppender)
      appendColumns(chunkAppender, CHUNK_TYPES(dimensions), chunks.length, (column, row) =>
        chunkColumns[column]!(row),
      );
    if (termAppender)
      appendColumns(termAppender, TERM_TYPES, postings, (column, row) => termColumns[column]!(row));
    if (vocabularyAppender)
      appendColumns(vocabularyAppender, VOCABULARY_TYPES, added.length, (column, row) =>
        column === 0 ? added[row]! : ids.get(added[row]!)!,
      );
    chunkAppender?.flushSync();
    termAppender?.flushSync();
    vocabularyAppender?.flushSync();
  } finally {
    chunkAppender?.closeSync();
    termAppender?.closeSync();
    vocabularyAppender?.closeSync();
  }
  known.appended(
    kbId,
    chunks.map((chunk) => chunk.doc.id),
    added,
  );
};

/** Statements a batch's events wrote for one knowledge base, run later (`PendingChunks.later`). */
type Queued = {
  readonly statements: string[];
  /** Whether they make its tables (which are then not in DuckDB until they run). */
  makesTables: boolean;
};

/**
 * The chunks a batch's inserts add, appended once per knowledge base at the batch's end rather than
 * per insert: each append is two appenders made, flushed on the main thread and closed, and a
 * replay inserts thousands of times. Kept per batch (`BatchScope`): a batch rolled back leaves
 * nothing here for the next. A deletion of documents, or an insert replacing them, marks their
 * chunks waiting as gone (`forgetWaiting`) and deletes only those already in the tables.
 *
 * Likewise the statements that make a knowledge base's tables and write its fields wait (`later`):
 * they run before anything else touches that knowledge base's tables in the batch, or at its end
 * in one text for all knowledge bases (`runQueued`); a knowledge base dropped in the batch that made
 * its tables has them never made (a replay makes and drops many in one batch).
 */
export class PendingChunks {
  private readonly byBatch = new WeakMap<BatchScope, Map<number, Waiting>>();
  private readonly queuedBy = new WeakMap<BatchScope, Map<number, Queued>>();
  /** Per batch, the knowledge bases to put on the deleted list (one statement for them all). */
  private readonly deletedBy = new WeakMap<BatchScope, number[]>();

  /** `knownOf`: what a writer's content tables hold (contentTables.ts), told of what is appended. */
  constructor(private readonly knownOf: (c: DuckDBConnection) => KnownContentTables) {}

  private waitingOf(batch: BatchScope) {
    let waiting = this.byBatch.get(batch);
    if (!waiting) this.byBatch.set(batch, (waiting = new Map()));
    return waiting;
  }

  /**
   * Statements of a knowledge base's tables (`makesTables`: among them, those that make them), to
   * run with the batch's others before anything reads or writes its tables.
   */
  later(batch: BatchScope, kbId: number, statements: readonly string[], makesTables: boolean) {
    if (statements.length === 0) return;
    let byKb = this.queuedBy.get(batch);
    if (!byKb) this.queuedBy.set(batch, (byKb = new Map()));
    let queued = byKb.get(kbId);
    if (!queued) byKb.set(kbId, (queued = { statements: [], makesTables: false }));
    queued.statements.push(...statements);
    queued.makesTables ||= makesTables;
  }

  /**
   * Runs the statements waiting (`later`) for one knowledge base (`kbId`), or for every one in one
   * text; the other knowledge bases' touch none of its tables.
   */
  async runQueued(c: DuckDBConnection, batch: BatchScope, kbId?: number) {
    const byKb = this.queuedBy.get(batch);
    let statements: readonly string[] = [];
    if (kbId === undefined) {
      if (byKb) statements = [...byKb.values()].flatMap((q) => q.statements);
      byKb?.clear();
      const deleted = this.deletedBy.get(batch);
      if (deleted && deleted.length > 0)
        statements = [
          ...statements,
          `INSERT OR IGNORE INTO ${DELETED_KBS} VALUES ${deleted.map((id) => `(${id})`).join(', ')}`,
        ];
      this.deletedBy.delete(batch);
    } else {
      const queued = byKb?.get(kbId);
      if (!queued) return;
      statements = queued.statements;
      byKb!.delete(kbId);
    }
    if (statements.length > 0) await c.run(statements.join(';\n'));
  }

  /**
   * The knowledge base goes on the deleted list with the batch's others, in one statement when
   * every statement waiting runs (only the projection reads the list, after running them).
   */
  deletedLater(batch: BatchScope, kbId: number) {
    let deleted = this.deletedBy.get(batch);
    if (!deleted) this.deletedBy.set(batch, (deleted = []));
    deleted.push(Number(kbId));
  }

  /**
   * The knowledge base is dropped: its statements waiting are not run; true when they would have
   * made its tables (which DuckDB then never had: nothing to drop).
   */
  dropQueued(batch: BatchScope, kbId: number): boolean {
    const byKb = this.queuedBy.get(batch);
    const queued = byKb?.get(kbId);
    if (!queued) return false;
    byKb!.delete(kbId);
    return queued.makesTables;
  }

  /** Keeps an insert's chunks for the batch's end (or appends them now, past the bound). */
  async add(c: DuckDBConnection, batch: BatchScope, kbId: number, dimensions: number, part: Part) {
    const byKb = this.waitingOf(batch);
    let waiting = byKb.get(kbId);
    if (!waiting) byKb.set(kbId, (waiting = { dimensions, parts: [], docIds: new Set(), chunks: 0 }));
    waiting.parts.push(part);
    for (const chunk of part.chunks) waiting.docIds.add(chunk.doc.id);
    waiting.chunks += part.chunks.length;
    if (waiting.chunks >= MAX_WAITING_CHUNKS) await this.append(c, batch, kbId);
  }

  /**
   * Documents deleted, or replaced by an insert: their chunks waiting are not written (`Part.gone`:
   * their terms are still numbered, as when they were appended and then deleted).
   */
  forgetWaiting(batch: BatchScope, kbId: number, docIds: readonly string[]) {
    const waiting = this.byBatch.get(batch)?.get(kbId);
    if (!waiting || !docIds.some((id) => waiting.docIds.has(id))) return;
    const ids = new Set(docIds);
    for (const part of waiting.parts)
      part.chunks.forEach((chunk, i) => {
        if (ids.has(chunk.doc.id)) (part.gone ??= new Set()).add(i);
      });
    for (const id of ids) waiting.docIds.delete(id);
  }

  /** The knowledge base's tables are dropped: what waits for them is dropped too. */
  discard(batch: BatchScope, kbId: number) {
    this.byBatch.get(batch)?.delete(kbId);
  }

  /**
   * Appends what waits for one knowledge base (before its postings are compacted, so they are among
   * them), the statements waiting run first.
   */
  async append(c: DuckDBConnection, batch: BatchScope, kbId: number) {
    await this.runQueued(c, batch, kbId);
    const waiting = this.byBatch.get(batch)?.get(kbId);
    if (!waiting) return;
    this.byBatch.get(batch)!.delete(kbId);
    await appendChunks(c, this.knownOf(c), kbId, waiting.dimensions, waiting.parts);
  }

  /** The batch's end: runs the statements waiting, then appends everything that waits, knowledge base by knowledge base. */
  async appendAll(c: DuckDBConnection, batch: BatchScope) {
    await this.runQueued(c, batch);
    const byKb = this.byBatch.get(batch);
    if (!byKb) return;
    for (const kbId of [...byKb.keys()]) await this.append(c, batch, kbId);
    this.byBatch.delete(batch);
  }
}
