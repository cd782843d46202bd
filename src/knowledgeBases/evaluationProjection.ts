import { selectRows, type RowOf } from '../projection/table';
import { deletableTable } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import type { KnowledgeBaseEvaluated } from '../../events';

/**
 * `knowledge_base_evaluations`: one row per `EVALUATE KNOWLEDGE_BASE` (its id the event's position),
 * with the settings it ran with, so evaluations of one test set (TEST_SET_DIGEST) compare across
 * embedding models and chunking. A knowledge base's deletion removes its rows (its stream keeps them).
 */
export const knowledgeBaseEvaluationsTable = deletableTable({
  table: 'knowledge_base_evaluations',
  key: 'ID',
  columns: columns(
    `ID BIGINT, KB_ID BIGINT, PROJECT VARCHAR, NAME VARCHAR, VERSION VARCHAR, TEST_TABLE VARCHAR NULL,
    TEST_SET_DIGEST VARCHAR, QUESTIONS INTEGER, GENERATED BOOLEAN, TOTAL INTEGER NULL,
    TOTAL_FOUND INTEGER NULL, RETRIEVED_IN_TOP_10 INTEGER NULL, HIT_RATE DOUBLE NULL, MRR DOUBLE NULL,
    RECALL_AT_1 DOUBLE NULL, RECALL_AT_3 DOUBLE NULL, RECALL_AT_5 DOUBLE NULL, RECALL_AT_10 DOUBLE NULL,
    CUMULATIVE_RECALL JSON NULL, AVG_QUERY_TIME DOUBLE, EMBEDDING_PROVIDER VARCHAR,
    EMBEDDING_MODEL VARCHAR, DIMENSIONS INTEGER NULL, CHUNK_SIZE INTEGER, CHUNK_OVERLAP INTEGER,
    HYBRID_SEARCH_ALPHA DOUBLE, TOP_K INTEGER, DOCUMENTS INTEGER, CHUNKS INTEGER, CREATED_AT TIMESTAMP`,
    // llm_relevancy (null for doc_id): MindsDB's metrics, the per-k lists as JSON.
    `AVG_RELEVANCY DOUBLE NULL, AVG_RELEVANCE_SCORE_BY_K JSON NULL,
    AVG_FIRST_RELEVANT_POSITION DOUBLE NULL, MEAN_MRR DOUBLE NULL, HIT_AT_K JSON NULL,
    BIN_PRECISION_AT_K JSON NULL, AVG_ENTROPY DOUBLE NULL, AVG_NDCG DOUBLE NULL,
    JUDGE_PROVIDER VARCHAR NULL, JUDGE_MODEL VARCHAR NULL, SAVED_TO VARCHAR NULL`,
  ),
  handles: ['KnowledgeBaseEvaluated', 'KnowledgeBaseDeleted'],
  deletedBy: { type: 'KnowledgeBaseDeleted', column: 'KB_ID', id: (e) => e.data.kbId },
  apply: (event, rows) => {
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
