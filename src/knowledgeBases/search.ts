import type { Duck } from '../duckdb/database';
import { searchSql } from '../kb/search';
import { questionTables } from '../kb/question';
import { quoteIdent } from '../shared/quoting';

export type KbSearchHit = {
  id: string;
  chunkId: string;
  content: string;
  metadata: Record<string, unknown>;
  distance: number;
  relevance: number;
};

export type KbSearchInput = {
  kbId: bigint;
  dimensions: number;
  vector: Float32Array;
  query: string;
  alpha: number;
  metadataColumns: readonly string[];
};

/** The `limit` most relevant chunks, by vector and keyword (see src/kb/search.ts). */
export const searchKnowledgeBase = (
  duck: Duck,
  input: KbSearchInput,
  limit: number,
): Promise<KbSearchHit[]> =>
  duck.withReader(async (c) => {
    const suffix = Math.random().toString(36).slice(2, 10);
    const tables = await questionTables(c, input, suffix);
    try {
      const sql = searchSql({
        kbId: input.kbId,
        dimensions: input.dimensions,
        vectorTable: tables.vectorTable,
        termsTable: tables.termsTable,
        alpha: input.alpha,
        metadataColumns: [],
      });
      const reader = await c.runAndReadAll(
        `SELECT * FROM (${sql}) AS hits LIMIT ${Math.max(1, Math.floor(limit))}`,
      );
      return (reader.getRowObjectsJS() as Record<string, unknown>[]).map((r) => ({
        id: String(r.id),
        chunkId: String(r.chunk_id),
        content: String(r.chunk_content),
        metadata: (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : (r.metadata ?? {})) as Record<
          string,
          unknown
        >,
        distance: Number(r.distance),
        relevance: Number(r.relevance),
      }));
    } finally {
      for (const t of tables.names)
        await c.run(`DROP TABLE IF EXISTS ${quoteIdent(t)}`).catch(() => undefined);
    }
  });
