import {
  ARRAY,
  arrayValue,
  BIGINT,
  FLOAT,
  INTEGER,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { KnowledgeBaseDocumentsInserted } from '../../events';
import { appendColumns } from '../duckdb/appendColumns';
import { chunkText } from '../engines/search/chunker';
import { chunkId, KB_SCHEMA } from '../engines/search/layout';
import { termsOf } from '../engines/search/terms';
import type { BatchScope } from '../projection/types';

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

/** One insert's chunks with their vectors, and the position of its event. */
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

/** The types of a chunk's row and of a term's row, in the order of their tables' columns (layout.ts). */
const CHUNK_TYPES = (dimensions: number) => [
  VARCHAR,
  VARCHAR,
  INTEGER,
  VARCHAR,
  VARCHAR,
  INTEGER,
  BIGINT,
  ARRAY(FLOAT, dimensions),
];
const TERM_TYPES = [VARCHAR, VARCHAR, INTEGER];

/** Appends the parts' chunks and their terms to the knowledge base's tables, in order: two appenders in all. */
const appendChunks = async (
  c: DuckDBConnection,
  kbId: number,
  dimensions: number,
  parts: readonly Part[],
) => {
  const chunks: Chunk[] = [];
  const vectors: Float32Array[] = [];
  const positions: bigint[] = [];
  for (const part of parts)
    part.chunks.forEach((chunk, i) => {
      chunks.push(chunk);
      vectors.push(part.vectors[i]!);
      positions.push(part.position);
    });
  // The terms' rows as columns (CHUNK_ID, TERM, TF): tens of rows a chunk, so no object a row.
  const termColumns: [string[], string[], number[]] = [[], [], []];
  const termCounts = chunks.map((chunk) => {
    let count = 0;
    for (const [term, tf] of termsOf(chunk.content)) {
      termColumns[0].push(chunk.id);
      termColumns[1].push(term);
      termColumns[2].push(tf);
      count += tf;
    }
    return count;
  });
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
  ];
  const chunkAppender = await c.createAppender(`kb_${kbId}`, KB_SCHEMA);
  const termAppender = await c.createAppender(`kb_${kbId}_terms`, KB_SCHEMA);
  try {
    appendColumns(chunkAppender, CHUNK_TYPES(dimensions), chunks.length, (column, row) =>
      chunkColumns[column]!(row),
    );
    appendColumns(
      termAppender,
      TERM_TYPES,
      termColumns[0].length,
      (column, row) => termColumns[column]![row]!,
    );
    chunkAppender.flushSync();
    termAppender.flushSync();
  } finally {
    chunkAppender.closeSync();
    termAppender.closeSync();
  }
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

  /** Appends what waits for one knowledge base. */
  private async append(c: DuckDBConnection, batch: BatchScope, kbId: number) {
    const waiting = this.byBatch.get(batch)?.get(kbId);
    if (!waiting) return;
    this.byBatch.get(batch)!.delete(kbId);
    await appendChunks(c, kbId, waiting.dimensions, waiting.parts);
  }

  /** The batch's end: appends everything that waits, knowledge base by knowledge base. */
  async appendAll(c: DuckDBConnection, batch: BatchScope) {
    const byKb = this.byBatch.get(batch);
    if (!byKb) return;
    for (const kbId of [...byKb.keys()]) await this.append(c, batch, kbId);
    this.byBatch.delete(batch);
  }
}
