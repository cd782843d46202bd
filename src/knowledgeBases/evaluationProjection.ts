import { allHandled, selectRows, tableProjection, type RowOf } from '../projection/table';
import type { TableReader } from '../projection/types';
import type { KnowledgeBaseEvaluated } from '../../events';

/**
 * `knowledge_base_evaluations`: one row per `EVALUATE KNOWLEDGE_BASE` (its id the event's position),
 * with the settings it ran with, so evaluations of one test set (TEST_SET_DIGEST) compare across
 * embedding models and chunking. A knowledge base's deletion removes its rows (its stream keeps them).
 */
export const knowledgeBaseEvaluationsTable = tableProjection({
  table: 'knowledge_base_evaluations',
  key: 'ID',
  columns: [
    { name: 'ID', type: 'BIGINT' },
    { name: 'KB_ID', type: 'BIGINT' },
    { name: 'PROJECT', type: 'VARCHAR' },
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'VERSION', type: 'VARCHAR' },
    { name: 'TEST_TABLE', type: 'VARCHAR', nullable: true },
    { name: 'TEST_SET_DIGEST', type: 'VARCHAR' },
    { name: 'QUESTIONS', type: 'INTEGER' },
    { name: 'GENERATED', type: 'BOOLEAN' },
    { name: 'TOTAL', type: 'INTEGER', nullable: true },
    { name: 'TOTAL_FOUND', type: 'INTEGER', nullable: true },
    { name: 'RETRIEVED_IN_TOP_10', type: 'INTEGER', nullable: true },
    { name: 'HIT_RATE', type: 'DOUBLE', nullable: true },
    { name: 'MRR', type: 'DOUBLE', nullable: true },
    { name: 'RECALL_AT_1', type: 'DOUBLE', nullable: true },
    { name: 'RECALL_AT_3', type: 'DOUBLE', nullable: true },
    { name: 'RECALL_AT_5', type: 'DOUBLE', nullable: true },
    { name: 'RECALL_AT_10', type: 'DOUBLE', nullable: true },
    { name: 'CUMULATIVE_RECALL', type: 'JSON', nullable: true },
    { name: 'AVG_QUERY_TIME', type: 'DOUBLE' },
    { name: 'EMBEDDING_PROVIDER', type: 'VARCHAR' },
    { name: 'EMBEDDING_MODEL', type: 'VARCHAR' },
    { name: 'DIMENSIONS', type: 'INTEGER', nullable: true },
    { name: 'CHUNK_SIZE', type: 'INTEGER' },
    { name: 'CHUNK_OVERLAP', type: 'INTEGER' },
    { name: 'HYBRID_SEARCH_ALPHA', type: 'DOUBLE' },
    { name: 'TOP_K', type: 'INTEGER' },
    { name: 'DOCUMENTS', type: 'INTEGER' },
    { name: 'CHUNKS', type: 'INTEGER' },
    { name: 'CREATED_AT', type: 'TIMESTAMP' },
    // llm_relevancy (null for doc_id): MindsDB's metrics, the per-k lists as JSON.
    { name: 'AVG_RELEVANCY', type: 'DOUBLE', nullable: true },
    { name: 'AVG_RELEVANCE_SCORE_BY_K', type: 'JSON', nullable: true },
    { name: 'AVG_FIRST_RELEVANT_POSITION', type: 'DOUBLE', nullable: true },
    { name: 'MEAN_MRR', type: 'DOUBLE', nullable: true },
    { name: 'HIT_AT_K', type: 'JSON', nullable: true },
    { name: 'BIN_PRECISION_AT_K', type: 'JSON', nullable: true },
    { name: 'AVG_ENTROPY', type: 'DOUBLE', nullable: true },
    { name: 'AVG_NDCG', type: 'DOUBLE', nullable: true },
    { name: 'JUDGE_PROVIDER', type: 'VARCHAR', nullable: true },
    { name: 'JUDGE_MODEL', type: 'VARCHAR', nullable: true },
    { name: 'SAVED_TO', type: 'VARCHAR', nullable: true },
  ],
  handles: ['KnowledgeBaseEvaluated', 'KnowledgeBaseDeleted'],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'KnowledgeBaseEvaluated': {
        const d = event.data;
        const s = d.scores;
        rows.insert({
          ID: event.meta.position,
          KB_ID: d.kbId,
          PROJECT: d.project,
          NAME: d.name,
          VERSION: d.version,
          TEST_TABLE: d.testTable,
          TEST_SET_DIGEST: d.testSet.digest,
          QUESTIONS: d.testSet.questions,
          GENERATED: d.testSet.generated !== null,
          TOTAL: s?.total ?? null,
          TOTAL_FOUND: s?.totalFound ?? null,
          RETRIEVED_IN_TOP_10: s?.retrievedInTop10 ?? null,
          HIT_RATE: s?.hitRate ?? null,
          MRR: s?.mrr ?? null,
          RECALL_AT_1: s?.recallAt1 ?? null,
          RECALL_AT_3: s?.recallAt3 ?? null,
          RECALL_AT_5: s?.recallAt5 ?? null,
          RECALL_AT_10: s?.recallAt10 ?? null,
          CUMULATIVE_RECALL: s ? cumulativeRecallObject(s.cumulativeRecall) : null,
          AVG_QUERY_TIME: d.avgQueryTimeMs / 1000,
          EMBEDDING_PROVIDER: d.settings.embedding.provider,
          EMBEDDING_MODEL: d.settings.embedding.model,
          DIMENSIONS: d.settings.embedding.dimensions,
          CHUNK_SIZE: d.settings.chunking.chunkSize,
          CHUNK_OVERLAP: d.settings.chunking.chunkOverlap,
          HYBRID_SEARCH_ALPHA: d.settings.alpha,
          TOP_K: d.settings.topK,
          DOCUMENTS: d.settings.documents,
          CHUNKS: d.settings.chunks,
          CREATED_AT: d.evaluatedAt,
          ...relevancyCells(d.relevancy ?? null),
          SAVED_TO: d.savedTo ?? null,
        });
        return;
      }
      case 'KnowledgeBaseDeleted': {
        const kbId = BigInt(event.data.kbId);
        for (const row of await rows.scan((r) => BigInt(r.KB_ID as number | bigint) === kbId))
          rows.delete(BigInt(row.ID as number | bigint));
        return;
      }
      default:
        return allHandled(event);
    }
  },
});

/** An llm_relevancy evaluation's cells (all null for doc_id, and in events recorded before it). */
function relevancyCells(r: KnowledgeBaseEvaluated['data']['relevancy']) {
  return {
    AVG_RELEVANCY: r?.avgRelevancy ?? null,
    AVG_RELEVANCE_SCORE_BY_K: r?.avgRelevanceScoreByK ?? null,
    AVG_FIRST_RELEVANT_POSITION: r?.avgFirstRelevantPosition ?? null,
    MEAN_MRR: r?.meanMrr ?? null,
    HIT_AT_K: r?.hitAtK ?? null,
    BIN_PRECISION_AT_K: r?.binPrecisionAtK ?? null,
    AVG_ENTROPY: r?.avgEntropy ?? null,
    AVG_NDCG: r?.avgNdcg ?? null,
    JUDGE_PROVIDER: r?.judge.provider ?? null,
    JUDGE_MODEL: r?.judge.model ?? null,
  };
}

export type KnowledgeBaseEvaluationRow = RowOf<typeof knowledgeBaseEvaluationsTable.columns>;

/** MindsDB's `cumulative_recall`: `{"0": recall@1, "1": recall@2, …}`. */
export const cumulativeRecallObject = (recall: readonly number[]) =>
  Object.fromEntries(recall.map((r, i) => [String(i), r]));

export const evaluationRowsOf = async (reader: TableReader, kbId: bigint, limit: number) =>
  selectRows(
    knowledgeBaseEvaluationsTable,
    reader,
    'SELECT * FROM knowledge_base_evaluations WHERE KB_ID = ? ORDER BY ID DESC LIMIT ?',
    [kbId, limit],
  );
