import type { LlmPrompt } from '../engines/llm/llmModelSpec';

/**
 * How `exact` and `contains` compare texts: Unicode NFC, case folded (lower case), whitespace
 * trimmed and every run of it one space. Punctuation counts.
 */
const normalised = (text: string) => text.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();

const pass = (ok: boolean) => (ok ? 1 : 0);

const exactScore = (answer: string, expected: string) => pass(normalised(answer) === normalised(expected));

const containsScore = (answer: string, expected: string) =>
  pass(normalised(answer).includes(normalised(expected)));

/**
 * The first number written in a text (`-3.5`, `1,234`, `2e3`), thousands separators dropped;
 * null when it writes none.
 */
const firstNumber = (text: string): number | null => {
  const found = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+/.exec(text);
  if (!found) return null;
  const value = Number(found[0].replaceAll(',', ''));
  return Number.isFinite(value) ? value : null;
};

/** `numeric`: the answer's first number within `tolerance` of the expected one's (absolute difference). */
const numericScore = (answer: string, expected: string, tolerance: number) => {
  const got = firstNumber(answer);
  const want = firstNumber(expected);
  return pass(got !== null && want !== null && Math.abs(got - want) <= tolerance);
};

/** The methods that compare the answer's text with `expected_answer`. */
export const textScore = (
  scoring: 'exact' | 'contains' | 'numeric',
  answer: string,
  expected: string,
  tolerance: number,
) =>
  scoring === 'exact'
    ? exactScore(answer, expected)
    : scoring === 'contains'
      ? containsScore(answer, expected)
      : numericScore(answer, expected, tolerance);

/** A cell as compared: numbers of any width as their decimal text (3, 3n and 3.0 are equal), null as null. */
const cellKey = (value: unknown): unknown =>
  typeof value === 'bigint' || typeof value === 'number'
    ? String(Number(value))
    : value instanceof Date
      ? value.toISOString()
      : value === undefined
        ? null
        : value;

/**
 * `sql_result`: two answers hold the same rows, as a multiset of value tuples: the order of the
 * rows and the columns' names are not compared (`SELECT count(*) AS n` equals `SELECT count(*)`),
 * the columns' order is.
 */
export const sameRows = (a: readonly Record<string, unknown>[], b: readonly Record<string, unknown>[]) => {
  const keys = (rows: readonly Record<string, unknown>[]) =>
    rows.map((r) => JSON.stringify(Object.values(r).map(cellKey))).sort();
  const [x, y] = [keys(a), keys(b)];
  return x.length === y.length && x.every((k, i) => k === y[i]);
};

/** What the `llm_judge` is asked of one case: a score from 0 to 100, by the rubric. */
export const agentJudgePrompt = (
  rubric: string,
  c: { question: string; expected: string; answer: string },
): LlmPrompt => ({
  messages: [
    {
      role: 'system',
      content:
        "You grade an AI agent's answer to a question against the expected answer, by this rubric: " +
        `${rubric}\nReturn ONLY a score between 0 and 100. No other text.`,
    },
    {
      role: 'user',
      content: `Question: ${c.question}\nExpected answer: ${c.expected}\nAgent's answer: ${c.answer}`,
    },
  ],
  json: false,
});

/** A case passes at a score of 1 (exact, contains, numeric, sql_result) or of 0.5 and more (llm_judge). */
export const JUDGE_PASS = 0.5;
