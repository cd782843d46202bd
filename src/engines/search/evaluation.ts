import crypto from 'node:crypto';

/**
 * Retrieval scores on questions with known answers (MindsDB's `EVALUATE KNOWLEDGE_BASE`,
 * `version = 'doc_id'`): each question was written from one document, and what counts is where that
 * document ranks among the distinct documents of the chunks retrieved for the question.
 */
export type EvaluationCase = { readonly question: string; readonly docId: string };

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

export type RetrievalScores = ReturnType<typeof retrievalScores>;

/** A test set's identity: equal digests, the same questions for the same documents, in order. */
export const testSetDigest = (cases: readonly EvaluationCase[]) => {
  const hash = crypto.createHash('sha256');
  for (const c of cases) hash.update(JSON.stringify([c.question, c.docId])).update('\n');
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
