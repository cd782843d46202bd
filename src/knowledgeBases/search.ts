import type { Duck } from '../duckdb/database';
import { searchesKeywords, topSearchSql } from '../engines/search/search';
import { questionParameters } from '../engines/search/question';

export type KbSearchHit = {
  id: string;
  chunkId: string;
  content: string;
  metadata: Record<string, unknown>;
  distance: number;
  relevance: number;
};

type KbSearchInput = {
  kbId: bigint;
  dimensions: number;
  vector: Float32Array;
  query: string;
  alpha: number;
  metadataColumns: readonly string[];
};

/** The `limit` most relevant chunks, by vector and keyword (see src/engines/search/search.ts). */
export const searchKnowledgeBase = (
  duck: Duck,
  input: KbSearchInput,
  limit: number,
): Promise<KbSearchHit[]> =>
  duck.withReader(async (c) => {
    const question = questionParameters(input, searchesKeywords(input.alpha));
    const sql = topSearchSql(
      {
        kbId: input.kbId,
        dimensions: input.dimensions,
        vectorTable: question.vectorTable,
        termsTable: question.termsTable,
        alpha: input.alpha,
        metadataColumns: [],
      },
      limit,
    );
    const reader = await c.runAndReadAll(sql, question.values, question.types);
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
  });
