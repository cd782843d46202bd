/**
 * llm_relevancy's metrics (src/engines/search/evaluation.ts, `relevancyMetrics`) are MindsDB's
 * `EvaluateRerank.evaluate_retrieval_metrics`: a case whose answer was computed by running
 * MindsDB's own function (mindsdb/interfaces/knowledge_base/evaluate.py) on the same scores, and
 * properties every judge's scores keep (bounded runs, seed printed). Kill check: the same property
 * over a judge threshold of "> 0.5" instead of MindsDB's "≥ 0.5" finds a counterexample.
 */
import fc from 'fast-check';
import { pythonRound2, relevancyMetrics, type RelevancyMetrics } from '../../src/engines/search/evaluation';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(300);

/** Scores as judges give them: whole percents (MindsDB reads a number of per cents), 0.5 included. */
const score = fc.integer({ min: 0, max: 100 }).map((n) => n / 100);
/** Questions with the same number of chunks each (top K), one to ten of each. */
const matrix = fc
  .integer({ min: 1, max: 10 })
  .chain((k) => fc.array(fc.array(score, { minLength: k, maxLength: k }), { minLength: 1, maxLength: 12 }));

/** What must hold of the metrics of `rows`, or why not. */
const violation = (rows: number[][], m: RelevancyMetrics): string | null => {
  const k = rows[0]!.length;
  const anyRelevant = rows.map((r) => r.some((s) => s >= 0.5));
  if (m.hitAtK.length !== k || m.binPrecisionAtK.length !== k || m.avgRelevanceScoreByK.length !== k)
    return 'a per-k list is not top K long';
  if (m.hitAtK.some((h, i) => i > 0 && h < m.hitAtK[i - 1]!)) return 'hit_at_k decreases';
  if (m.hitAtK[0] !== m.binPrecisionAtK[0]) return 'hit@1 differs from precision@1';
  const found = anyRelevant.filter(Boolean).length / rows.length;
  if (m.hitAtK[k - 1] !== pythonRound2(found))
    return 'hit@K is not the share of questions with a relevant chunk';
  if ((m.avgFirstRelevantPosition === null) !== !anyRelevant.some(Boolean))
    return 'avg_first_relevant_position is null although a chunk scored ≥ 0.5 (or the reverse)';
  if (m.meanMrr < 0 || m.meanMrr > found + 1e-12) return 'mean_mrr outside [0, share found]';
  if (m.avgNdcg < 0 || m.avgNdcg > 1) return 'avg_ndcg outside [0, 1]';
  if (m.avgEntropy < 0 || m.avgEntropy > Math.log(k) + 1e-12) return 'avg_entropy outside [0, ln K]';
  const sorted = relevancyMetrics(rows.map((r) => [...r].sort((a, b) => b - a)));
  const scored = rows.filter((r) => r.some((s) => s > 0)).length;
  if (Math.abs(sorted.avgNdcg - scored / rows.length) > 1e-12)
    return 'chunks in the ideal order do not score nDCG 1';
  return null;
};

describe('llm_relevancy metrics (MindsDB’s formulas)', () => {
  it('answers what MindsDB’s evaluate_retrieval_metrics answers on the same scores', () => {
    // python3: EvaluateRerank.evaluate_retrieval_metrics over these rows (an empty row: a question
    // that retrieved nothing, left out of all but avg_relevancy's denominator).
    expect(relevancyMetrics([[0.9, 0.1, 0.8], [0, 0, 0.6], [], [0.2, 0.3, 0.4]])).toEqual({
      avgRelevancy: 0.27499999999999997,
      avgRelevanceScoreByK: [0.37, 0.13, 0.6],
      avgFirstRelevantPosition: 1,
      meanMrr: 0.4444444444444444,
      hitAtK: [0.33, 0.33, 0.67],
      binPrecisionAtK: [0.33, 0.17, 0.33],
      avgEntropy: 0.6428067252131608,
      avgNdcg: 0.763973166088561,
    });
  });

  it('rounds the per-k lists as Python’s round(x, 2) does: half to even on the double', () => {
    expect([0.125, 0.375, 0.135, 0.005, 0.015, 2 / 3, 0.5].map(pythonRound2)).toEqual([
      0.12, 0.38, 0.14, 0.01, 0.01, 0.67, 0.5,
    ]);
  });

  it('keeps, for any judge’s scores, what the formulas promise', () => {
    fc.assert(
      fc.property(matrix, (rows) => violation(rows, relevancyMetrics(rows)) === null),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: a threshold of "> 0.5" (not MindsDB’s ≥ 0.5) is caught by the same property', () => {
    const strictThreshold = (rows: number[][]) =>
      relevancyMetrics(rows.map((r) => r.map((s) => (s === 0.5 ? 0.4999 : s))));
    const found = fc.check(
      fc.property(matrix, (rows) => violation(rows, strictThreshold(rows)) === null),
      { seed: SEED, numRuns: RUNS },
    );
    expect(found.failed).toBe(true);
  });
});
