import crypto from 'node:crypto';

/**
 * Retrieval scores on questions with known answers (MindsDB's `EVALUATE KNOWLEDGE_BASE`,
 * `version = 'doc_id'`): each question was written from one document, and what counts is where that
 * document ranks among the distinct documents of the chunks retrieved for the question.
 */

/** The 1-based rank of `docId` among the distinct documents of `retrieved` (chunk order), else null. */
export const rankOf = (docId: string, retrieved: readonly string[], topK: number): number | null => {
  const seen: string[] = [];
  for (const id of retrieved) {
    if (seen.includes(id)) continue;
    seen.push(id);
    if (seen.length > topK) return null;
    if (id === docId) return seen.length;
  }
  return null;
};

/**
 * The scores of a test set from the ranks of its questions (null: not in the top K):
 * - hit rate: the share found in the top K; MRR: the mean of 1 / rank (0 when not found);
 * - recall@k: the share found at rank ≤ k (one relevant document per question);
 * - MindsDB's columns: total, total_found, retrieved_in_top_10, cumulative_recall (recall at every
 *   rank up to K).
 */
export const retrievalScores = (ranks: readonly (number | null)[], topK: number) => {
  const total = ranks.length;
  const share = (n: number) => (total === 0 ? 0 : n / total);
  const within = (k: number) => ranks.filter((r) => r !== null && r <= k).length;
  const found = ranks.filter((r) => r !== null).length;
  return {
    total,
    totalFound: found,
    retrievedInTop10: within(10),
    hitRate: share(found),
    mrr: share(ranks.reduce<number>((sum, r) => sum + (r === null ? 0 : 1 / r), 0)),
    recallAt1: share(within(1)),
    recallAt3: share(within(3)),
    recallAt5: share(within(5)),
    recallAt10: share(within(10)),
    cumulativeRecall: Array.from({ length: topK }, (_, i) => share(within(i + 1))),
    ranks: [...ranks],
  };
};

/**
 * A test set's identity: equal digests, the same pairs in order (doc_id: question and document;
 * llm_relevancy: question and reference answer).
 */
export const testSetDigest = (pairs: readonly (readonly [string, string])[]) => {
  const hash = crypto.createHash('sha256');
  for (const pair of pairs) hash.update(JSON.stringify(pair)).update('\n');
  return hash.digest('hex');
};

/** What a language model is asked to write for one chunk: a question only that chunk answers. */
export const QUESTION_PROMPT = [
  'You write test questions for a search engine over a collection of texts.',
  'Given one text, write one question that this text answers and that has enough specific clues to find this text among many others, and its short answer taken from the text.',
  'Answer with JSON only: {"query": "…", "reference_answer": "…"}.',
].join(' ');

/** A model's `{"query", "reference_answer"}` (in a Markdown fence or not), or null when it is not one. */
export const parseGeneratedQuestion = (text: string): { question: string; answer: string } | null => {
  const body = text
    .trim()
    .replace(/^```[a-zA-Z]*\s*/, '')
    .replace(/\s*```$/, '');
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    const parsed = JSON.parse(body.slice(start, end + 1)) as Record<string, unknown>;
    const question = parsed.query ?? parsed.question;
    const answer = parsed.reference_answer ?? parsed.answer ?? '';
    if (typeof question !== 'string' || question.trim() === '') return null;
    return {
      question: question.trim(),
      answer: typeof answer === 'string' ? answer : JSON.stringify(answer),
    };
  } catch {
    return null;
  }
};

/**
 * What the judge is asked of one retrieved chunk (MindsDB's reranker, method `no-logprobs`,
 * word for word): the question in the system message, the chunk as the user's.
 */
export const judgePrompt = (question: string, chunk: string) => ({
  messages: [
    {
      role: 'system' as const,
      content:
        'Score the relevance between search query and user message on scale between 0 and 100 per cents. ' +
        'Consider semantic meaning, key concepts, and contextual relevance. ' +
        'Return ONLY a numerical score between 0 and 100 per cents. No other text. Stop after sending a number. ' +
        `Search query: ${question}`,
    },
    { role: 'user' as const, content: chunk },
  ],
  json: false,
});

/**
 * The judge's answer as a score, as MindsDB reads it: its first run of digits, over 100, clamped
 * to [0, 1]; an answer without a digit scores 0 (so "0.9" reads as 0, and "85%" as 0.85).
 */
export const judgeScore = (answer: string): number => {
  const digits = /\d+/.exec(answer)?.[0];
  if (digits === undefined) return 0;
  return Math.max(0, Math.min(1, Number(digits) / 100));
};

/**
 * Python's `round(x, 2)`: half to even on the double's exact value (0.125 → 0.12, 0.375 → 0.38),
 * which MindsDB's lists are rounded with; `toFixed(40)` shows enough of the exact value to tell a
 * true tie from a near one.
 */
export const pythonRound2 = (x: number): number => {
  const sign = x < 0 ? -1 : 1;
  const [whole, fraction = ''] = Math.abs(x).toFixed(40).split('.');
  const kept = Number(`${whole}.${fraction.slice(0, 2)}`);
  const rest = fraction.slice(2);
  const half = '5'.padEnd(rest.length, '0');
  const lastDigit = Number(fraction[1] ?? '0');
  const up = rest > half || (rest === half && lastDigit % 2 === 1);
  return (sign * Math.round((kept + (up ? 0.01 : 0)) * 100)) / 100;
};

/** `scipy.stats.entropy` of the scores as a distribution (MindsDB's `calc_entropy`): natural log, zeros left out. */
const entropyOf = (scores: readonly number[]) => {
  const total = scores.reduce((s, x) => s + x, 0);
  return -scores
    .filter((x) => x > 0)
    .map((x) => x / total)
    .reduce((s, p) => s + p * Math.log(p), 0);
};

/** Discounted cumulative gain: the score at 0-based position i weighs 1 / log2(i + 2). */
const dcg = (scores: readonly number[]) => scores.reduce((s, x, i) => s + x / Math.log2(i + 2), 0);

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length);

/** The mean of each column (rank), over the rows long enough to have it (Python's `zip(*rows)`: the shortest row's length). */
const columnMeans = (rows: readonly (readonly number[])[]) => {
  if (rows.length === 0) return [];
  const width = rows.reduce((w, r) => Math.min(w, r.length), Infinity);
  return Array.from({ length: width }, (_, k) => pythonRound2(mean(rows.map((r) => r[k]!))));
};

/**
 * MindsDB's `llm_relevancy` metrics (`EvaluateRerank.evaluate_retrieval_metrics`), from the
 * judge's scores of each question's retrieved chunks, in rank order. A chunk is relevant when
 * scored ≥ 0.5. Questions with no chunk are left out of every metric but `avg_relevancy`, whose
 * denominator counts them (as MindsDB's does).
 * - avg_relevancy: the mean over questions of the mean score of its chunks;
 * - avg_relevance_score_by_k: per rank k, the mean score of the k-th chunk (2 places);
 * - avg_first_relevant_position: the mean 0-based position of the first relevant chunk, over the
 *   questions that have one (null when none has);
 * - mean_mrr: the mean of 1 / (position + 1) of the first relevant chunk (0 when none);
 * - hit_at_k: per k, the share of questions with a relevant chunk in the first k (2 places);
 * - bin_precision_at_k: per k, the mean share of relevant chunks among the first k (2 places);
 * - avg_entropy: the mean entropy of the scores taken as a distribution (0 for a single chunk);
 * - avg_ndcg: the mean of DCG(scores) / DCG(scores sorted descending) (0 when all score 0).
 * Python's `zip(*rows)` stops at the shortest row: the per-k lists are as long as the fewest
 * chunks any question got.
 */
export const relevancyMetrics = (perQuestion: readonly (readonly number[])[]) => {
  const answered = perQuestion.filter((scores) => scores.length > 0);
  const relevant = answered.map((scores) => scores.map((s) => (s >= 0.5 ? 1 : 0)));
  const firsts = relevant.map((flags) => flags.indexOf(1)).map((p) => (p < 0 ? null : p));
  const found = firsts.filter((p): p is number => p !== null);
  const prefixes = (flags: readonly number[], f: (hits: number, k: number) => number) =>
    flags.map((_, i) =>
      f(
        flags.slice(0, i + 1).reduce((s, x) => s + x, 0),
        i + 1,
      ),
    );
  return {
    avgRelevancy:
      perQuestion.length === 0 ? 0 : answered.reduce((s, scores) => s + mean(scores), 0) / perQuestion.length,
    avgRelevanceScoreByK: columnMeans(answered),
    avgFirstRelevantPosition: found.length === 0 ? null : mean(found),
    meanMrr: mean(firsts.map((p) => (p === null ? 0 : 1 / (p + 1)))),
    hitAtK: columnMeans(relevant.map((flags) => prefixes(flags, (hits) => (hits > 0 ? 1 : 0)))),
    binPrecisionAtK: columnMeans(relevant.map((flags) => prefixes(flags, (hits, k) => hits / k))),
    avgEntropy: mean(answered.map((scores) => (scores.length > 1 ? entropyOf(scores) : 0))),
    avgNdcg: mean(
      answered.map((scores) => {
        const ideal = dcg([...scores].sort((a, b) => b - a));
        // At most 1; the sums in another order may differ in the last bit.
        return ideal > 0 ? Math.min(1, dcg(scores) / ideal) : 0;
      }),
    ),
  };
};

export type RelevancyMetrics = ReturnType<typeof relevancyMetrics>;
