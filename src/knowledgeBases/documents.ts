import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type {
  KnowledgeBaseDocumentsDeleted,
  KnowledgeBaseDocumentsInserted,
  KnowledgeBaseIndexed,
} from '../../events';
import { settled, type AppContext } from '../context';
import { FACTS } from '../eventlog/commands';
import { cellOf, cellText } from '../shared/rowCells';
import { HASHING_DIMENSIONS } from '../engines/search/hashingEmbedder';
import { requireChunksFitOneInsert } from '../engines/search/layout';
import { invalid } from '../shared/errors';
import type { BlobStore } from '../storage/blobs';
import { isBuiltInModel, type KnowledgeBaseEmbedder } from './embedding';
import type { LoadKnowledgeBase } from './lookup';
import { chunksOf, type KbDocument } from './pendingChunks';
import { documentsStream, settingsOf, type KnowledgeBase } from './state';

/** A knowledge base's documents stream: facts appended in order, nothing to decide on. */

/** Rows → documents: the id column (or a digest of the content), the content columns, the metadata. */
const documentsOf = (kb: KnowledgeBase, rows: readonly Record<string, unknown>[]): KbDocument[] => {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]!);
  const missing = kb.contentColumns.filter((c) => !columns.some((k) => k.toLowerCase() === c.toLowerCase()));
  if (missing.length === kb.contentColumns.length)
    throw invalid(
      `The rows have no content column ${kb.contentColumns.join(', ')} (their columns: ${columns.join(', ')}); name it in content_columns`,
      'Invalid documents',
    );
  const skip = new Set([kb.idColumn, ...kb.contentColumns].map((c) => c.toLowerCase()));
  const documents = rows.flatMap((row) => {
    const content = kb.contentColumns
      .map((c) => cellText(cellOf(row, c)))
      .filter((t) => t.trim() !== '')
      .join('\n\n');
    if (content === '') return [];
    const rawId = cellOf(row, kb.idColumn);
    const id =
      rawId === null || rawId === undefined
        ? crypto.createHash('sha256').update(content).digest('hex').slice(0, 16)
        : cellText(rawId);
    const metadataColumns = kb.metadataColumns ?? Object.keys(row).filter((k) => !skip.has(k.toLowerCase()));
    const metadata = Object.fromEntries(metadataColumns.map((c) => [c, cellOf(row, c) ?? null]));
    return [{ id, content, metadata }];
  });
  // Within one insert the last row of an id wins, as a later insert of it replaces it.
  const byId = new Map<string, KbDocument>();
  for (const d of documents) {
    byId.delete(d.id);
    byId.set(d.id, d);
  }
  return [...byId.values()];
};

/**
 * A knowledge base's documents, written to its own stream (`kb-<id>`): inserts recorded as one event
 * naming content-addressed blobs, deletes as the ids they remove. The projection does the indexing.
 */
export const knowledgeBaseDocuments = (
  ctx: AppContext,
  blobs: BlobStore,
  load: LoadKnowledgeBase,
  { embed }: KnowledgeBaseEmbedder,
) => {
  const tempDir = path.join(ctx.config.dataDir, 'files', 'incoming');

  /** Bytes stored content-addressed (locally, and in PostgreSQL when the log is there). */
  const store = async (bytes: Buffer | string, format: string) => {
    fs.mkdirSync(tempDir, { recursive: true });
    const temp = path.join(tempDir, `${crypto.randomUUID()}.${format}`);
    await fs.promises.writeFile(temp, bytes);
    try {
      const digest = crypto.createHash('sha256').update(bytes).digest('hex');
      await blobs.put(temp, digest, format);
      return digest;
    } finally {
      await fs.promises.rm(temp, { force: true });
    }
  };

  /**
   * Appends a knowledge base's content event to its own stream, and answers once the projection
   * has applied it (the content is indexed there, not by the command).
   */
  const recordSettled = async (
    kbId: KnowledgeBase['id'],
    event: KnowledgeBaseDocumentsInserted | KnowledgeBaseDocumentsDeleted | KnowledgeBaseIndexed,
  ) => {
    const outcome = await ctx.commands.run(documentsStream(kbId), FACTS, () => [event]);
    await settled(ctx, outcome.lastPosition);
  };

  const deleteDocuments = async (projectName: string, name: string, ids: readonly string[]) => {
    const { kb } = await load(projectName, name);
    if (ids.length === 0) return;
    const event: KnowledgeBaseDocumentsDeleted = {
      type: 'KnowledgeBaseDocumentsDeleted',
      data: { kbId: Number(kb.id), ids: [...new Set(ids)], deletedAt: ctx.clock().toISOString() },
    };
    await recordSettled(kb.id, event);
  };

  /**
   * CREATE INDEX ON KNOWLEDGE_BASE: recorded, and answered once the projection has compacted the
   * knowledge base's postings (layout.ts `compactPostingsSql`).
   */
  const index = async (projectName: string, name: string) => {
    const { kb } = await load(projectName, name);
    const event: KnowledgeBaseIndexed = {
      type: 'KnowledgeBaseIndexed',
      data: { kbId: Number(kb.id), indexedAt: ctx.clock().toISOString() },
    };
    await recordSettled(kb.id, event);
  };

  /**
   * Inserts documents: recorded as one event (documents and any provider vectors stored as blobs
   * first), then cut, embedded and indexed by the projection. A document whose id exists is replaced.
   */
  const insert = async (
    projectName: string,
    name: string,
    rows: readonly Record<string, unknown>[],
    signal?: AbortSignal,
  ) => {
    const { project, kb } = await load(projectName, name);
    const documents = documentsOf(kb, rows);
    if (documents.length === 0) return { documents: 0, chunks: 0 };
    const { chunkSize, chunkOverlap } = settingsOf(kb);
    const chunking = { chunkSize, chunkOverlap };
    const chunks = chunksOf(documents, chunking);
    requireChunksFitOneInsert(chunks.length);
    const documentsDigest = await store(documents.map((d) => JSON.stringify(d)).join('\n') + '\n', 'jsonl');
    const embedded = isBuiltInModel(kb.embeddingModel)
      ? { kind: 'hashing' as const, dimensions: Number(kb.embeddingModel.dimensions ?? HASHING_DIMENSIONS) }
      : await (async () => {
          const e = await embed(
            kb,
            chunks.map((c) => c.content),
            signal,
          );
          if (e.kind !== 'stored') throw new Error('a provider model answered as the built-in one');
          const bytes = Buffer.alloc(e.vectors.length * e.dimensions * 4);
          e.vectors.forEach((v, i) =>
            Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(bytes, i * e.dimensions * 4),
          );
          return {
            kind: 'stored' as const,
            dimensions: e.dimensions,
            vectorsDigest: await store(bytes, 'f32'),
            provider: e.provider,
            model: e.model,
          };
        })();
    const event: KnowledgeBaseDocumentsInserted = {
      type: 'KnowledgeBaseDocumentsInserted',
      data: {
        kbId: Number(kb.id),
        project: project.name,
        name: kb.name,
        documentsDigest,
        documents: documents.length,
        chunks: chunks.length,
        chunking,
        embedding: embedded,
        insertedAt: ctx.clock().toISOString(),
      },
    };
    await recordSettled(kb.id, event);
    return { documents: documents.length, chunks: chunks.length };
  };

  return { insert, deleteDocuments, index };
};
