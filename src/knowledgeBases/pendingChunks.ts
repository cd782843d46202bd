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
import type { HeldContent, KnownContentTables } from './contentTables';

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
  for (const part of parts)
    part.chunks.forEach((chunk, i) => {
      chunks.push(chunk);
      vectors.push(part.vectors[i]!);
      positions.push(part.position);
      rowIds.push(chunkRowId(part.position, i));
    });
  // Each chunk's terms, in the order its words first come; the distinct terms in the order the chunks first have them.
  const chunkTerms = chunks.map((chunk) => termsOf(chunk.content));
  const distinct = new Set<string>();
  let postings = 0;
  for (const terms of chunkTerms) {
    postings += terms.size;
    for (const term of terms.keys()) distinct.add(term);
  }
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
  const chunkAppender = await c.createAppender(names.chunks, KB_SCHEMA);
  const termAppender = await c.createAppender(names.terms, KB_SCHEMA);
  const vocabularyAppender = added.length > 0 ? await c.createAppender(names.vocabulary, KB_SCHEMA) : null;
  try {
    appendColumns(chunkAppender, CHUNK_TYPES(dimensions), chunks.length, (column, row) =>
      chunkColumns[column]!(row),
    );
    appendColumns(termAppender, TERM_TYPES, postings, (column, row) => termColumns[column]!(row));
    if (vocabularyAppender)
      appendColumns(vocabularyAppender, VOCABULARY_TYPES, added.length, (column, row) =>
        column === 0 ? added[row]! : ids.get(added[row]!)!,
      );
    chunkAppender.flushSync();
    termAppender.flushSync();
    vocabularyAppender?.flushSync();
  } finally {
    chunkAppender.closeSync();
    termAppender.closeSync();
    vocabularyAppender?.closeSync();
  }
  known.appended(
    kbId,
    chunks.map((chunk) => chunk.doc.id),
    added,
  );
};

/**
 * The chunks a batch's inserts add, appended once per knowledge base at the batch's end rather than
 * per insert: each append is two appenders made, flushed on the main thread and closed, and a
 * replay inserts thousands of times. Kept per batch (`BatchScope`): a batch rolled back leaves
 * nothing here for the next. What the batch's own statements read must see them: a deletion of
 * documents, or an insert replacing them, first appends what waits for that knowledge base when
 * one of its documents is among them.
 */
export class PendingChunks {
  private readonly byBatch = new WeakMap<BatchScope, Map<number, Waiting>>();

  /** `knownOf`: what a writer's content tables hold (contentTables.ts), told of what is appended. */
  constructor(private readonly knownOf: (c: DuckDBConnection) => KnownContentTables) {}

  private waitingOf(batch: BatchScope) {
    let waiting = this.byBatch.get(batch);
    if (!waiting) this.byBatch.set(batch, (waiting = new Map()));
    return waiting;
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

  /** Appends what waits for the knowledge base if one of these documents is among it. */
  async appendIfHolding(c: DuckDBConnection, batch: BatchScope, kbId: number, docIds: readonly string[]) {
    const waiting = this.byBatch.get(batch)?.get(kbId);
    if (waiting && docIds.some((id) => waiting.docIds.has(id))) await this.append(c, batch, kbId);
  }

  /** The knowledge base's tables are dropped: what waits for them is dropped too. */
  discard(batch: BatchScope, kbId: number) {
    this.byBatch.get(batch)?.delete(kbId);
  }

  /** Appends what waits for one knowledge base (before its postings are compacted, so they are among them). */
  async append(c: DuckDBConnection, batch: BatchScope, kbId: number) {
    const waiting = this.byBatch.get(batch)?.get(kbId);
    if (!waiting) return;
    this.byBatch.get(batch)!.delete(kbId);
    await appendChunks(c, this.knownOf(c), kbId, waiting.dimensions, waiting.parts);
  }

  /** The batch's end: appends everything that waits, knowledge base by knowledge base. */
  async appendAll(c: DuckDBConnection, batch: BatchScope) {
    const byKb = this.byBatch.get(batch);
    if (!byKb) return;
    for (const kbId of [...byKb.keys()]) await this.append(c, batch, kbId);
    this.byBatch.delete(batch);
  }
}
