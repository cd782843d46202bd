/**
 * knowledge_base_evaluations, given events: an evaluation recorded before llm_relevancy and save_to
 * were offered (no `relevancy`, no `savedTo`) still reads under the contract and projects as it did,
 * its new columns null; an llm_relevancy evaluation fills them.
 */
import { KnowledgeBaseEvaluated } from '../../events';
import { projected } from '../support/projection';

/** An evaluation as `EVALUATE … version = 'doc_id'` recorded it before this change, field for field. */
const recordedBefore = {
  kbId: 7,
  project: 'p',
  name: 'kb',
  version: 'doc_id',
  testTable: 'files.q',
  testSet: { digest: 'a'.repeat(64), questions: 2, generated: null },
  settings: {
    embedding: { provider: 'mindledger', model: 'hashing', dimensions: 384 },
    chunking: { chunkSize: 1000, chunkOverlap: 200 },
    alpha: 0.5,
    topK: 10,
    documents: 4,
    chunks: 4,
  },
  scores: {
    total: 2,
    totalFound: 1,
    retrievedInTop10: 1,
    hitRate: 0.5,
    mrr: 0.25,
    recallAt1: 0,
    recallAt3: 0,
    recallAt5: 0.5,
    recallAt10: 0.5,
    cumulativeRecall: [0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
    ranks: [4, null],
  },
  avgQueryTimeMs: 2,
  evaluatedAt: '2026-11-01T10:00:00.000Z',
};

const judged = {
  ...recordedBefore,
  version: 'llm_relevancy',
  scores: null,
  relevancy: {
    judge: { provider: 'openai', model: 'judge', baseUrl: 'http://127.0.0.1:1/v1' },
    avgRelevancy: 0.45,
    avgRelevanceScoreByK: [0.6, 0],
    avgFirstRelevantPosition: null,
    meanMrr: 0,
    hitAtK: [0, 0],
    binPrecisionAtK: [0, 0],
    avgEntropy: 0.5,
    avgNdcg: 0,
    scores: [
      [0.4, 0.2],
      [0.3, 0.1],
    ],
  },
  savedTo: 'files.results',
};

describe('knowledge_base_evaluations', () => {
  it('reads an evaluation recorded before llm_relevancy and projects it as before, the new columns null', async () => {
    const data = KnowledgeBaseEvaluated.schema.parse(recordedBefore);
    const rows = (await projected([{ type: 'KnowledgeBaseEvaluated', data }]))('knowledge_base_evaluations');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      VERSION: 'doc_id',
      MRR: 0.25,
      TOTAL: 2,
      AVG_RELEVANCY: null,
      HIT_AT_K: null,
      MEAN_MRR: null,
      JUDGE_MODEL: null,
      SAVED_TO: null,
    });
  });

  it('projects an llm_relevancy evaluation’s metrics and its save_to, the doc_id columns null', async () => {
    const data = KnowledgeBaseEvaluated.schema.parse(judged);
    const rows = (await projected([{ type: 'KnowledgeBaseEvaluated', data }]))('knowledge_base_evaluations');
    expect(rows[0]).toMatchObject({
      VERSION: 'llm_relevancy',
      TOTAL: null,
      MRR: null,
      AVG_RELEVANCY: 0.45,
      AVG_FIRST_RELEVANT_POSITION: null,
      MEAN_MRR: 0,
      AVG_ENTROPY: 0.5,
      JUDGE_PROVIDER: 'openai',
      JUDGE_MODEL: 'judge',
      SAVED_TO: 'files.results',
    });
    expect(rows[0]!.HIT_AT_K).toEqual([0, 0]);
  });

  it('refuses a version the contract does not know', () => {
    expect(KnowledgeBaseEvaluated.schema.safeParse({ ...recordedBefore, version: 'rerank' }).success).toBe(
      false,
    );
  });
});
