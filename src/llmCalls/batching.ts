import type { ChatMessage, JsonSchemaFormat } from '../engines/llm';
import type { LlmPrompt } from '../engines/llm/llmModelSpec';

/**
 * Several rows per provider request. A query that asks many prompts of one shape (the same system
 * messages, one user message each: an LLM model's default mode, `LLM()`) sends them in batches:
 * each row numbered in one user message, the answer asked as a JSON object keyed by row
 * (`{"answers": [{"row": 1, "answer": "…"}, …]}`, a strict JSON schema). Every row must come back
 * exactly once with a text answer: a row missing, malformed or named twice is asked again alone,
 * never taken from a neighbour.
 */

/** Rows one request carries at most. */
export const MAX_BATCH_ROWS = 16;
/**
 * A query batches only when it asks more distinct prompts of one shape than one batch holds: fewer
 * are asked one by one (LLM_SQL_CONCURRENCY at once they take a few latencies, and each answer
 * stands alone, with no instruction about rows around it).
 */
const BATCH_FROM = MAX_BATCH_ROWS + 1;
/** The rows' characters one request carries at most, whatever the model's context window. */
const MAX_BATCH_CHARS = 24_000;
/** What the JSON keyed by row costs per answer, in tokens, beyond the answer itself. */
const ANSWER_OVERHEAD_TOKENS = 24;

/** Context windows (tokens) by model name prefix; anything else is taken as a small local model's. */
const CONTEXT_WINDOWS: readonly [RegExp, number][] = [
  [/^(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|o[1-9]|chatgpt-4o)/i, 128_000],
  [/^(claude|gemini)/i, 128_000],
  [/^gpt-3\.5/i, 16_000],
  [/^gpt-4/i, 8_000],
];
const DEFAULT_CONTEXT_TOKENS = 8_000;

const contextTokensOf = (model: string): number =>
  CONTEXT_WINDOWS.find(([pattern]) => pattern.test(model))?.[1] ?? DEFAULT_CONTEXT_TOKENS;

/**
 * The rows' characters a batch may carry for this model: a quarter of its context window (at about
 * three characters a token, the rest left for the instruction and the answers), at most
 * MAX_BATCH_CHARS.
 */
export const batchCharBudget = (model: string): number =>
  Math.min(MAX_BATCH_CHARS, Math.floor((contextTokensOf(model) * 3) / 4));

/**
 * What prompts of one batch share (their messages but the last), or null: a prompt that cannot be
 * batched (a JSON answer, a conversation, anything but one user message last).
 */
const batchShapeOf = (prompt: LlmPrompt): string | null => {
  if (prompt.json) return null;
  const last = prompt.messages[prompt.messages.length - 1];
  if (!last || last.role !== 'user') return null;
  const before = prompt.messages.slice(0, -1);
  if (!before.every((m) => m.role === 'system')) return null;
  return JSON.stringify(before.map((m) => m.content));
};

const questionOf = (prompt: LlmPrompt) => prompt.messages[prompt.messages.length - 1]!.content ?? '';
const charsOf = (prompt: LlmPrompt) => questionOf(prompt).length;

/**
 * Prompts (distinct, in the query's order) into requests: those of one shape, when more than one
 * batch's worth, in batches of at most MAX_BATCH_ROWS rows and the model's character budget (a row
 * larger than the budget goes alone); the others one by one. Each unit lists the indexes it asks.
 */
export const planBatches = (prompts: readonly LlmPrompt[], model: string): number[][] => {
  const byShape = new Map<string, number[]>();
  const alone: number[][] = [];
  prompts.forEach((p, i) => {
    const shape = batchShapeOf(p);
    if (shape === null) alone.push([i]);
    else {
      const group = byShape.get(shape);
      if (group) group.push(i);
      else byShape.set(shape, [i]);
    }
  });
  const budget = batchCharBudget(model);
  const units: number[][] = [...alone];
  for (const group of byShape.values()) {
    if (group.length < BATCH_FROM) {
      units.push(...group.map((i) => [i]));
      continue;
    }
    let batch: number[] = [];
    let chars = 0;
    for (const i of group) {
      const c = charsOf(prompts[i]!);
      if (batch.length > 0 && (batch.length >= MAX_BATCH_ROWS || chars + c > budget)) {
        units.push(batch);
        batch = [];
        chars = 0;
      }
      batch.push(i);
      chars += c;
    }
    if (batch.length) units.push(batch);
  }
  return units.sort((a, b) => a[0]! - b[0]!);
};

/** The schema a batch's answer must follow (strict: exactly these keys). */
export const BATCH_FORMAT: JsonSchemaFormat = {
  name: 'row_answers',
  schema: {
    type: 'object',
    properties: {
      answers: {
        type: 'array',
        items: {
          type: 'object',
          properties: { row: { type: 'integer' }, answer: { type: 'string' } },
          required: ['row', 'answer'],
          additionalProperties: false,
        },
      },
    },
    required: ['answers'],
    additionalProperties: false,
  },
};

/** The instruction a batch adds, after the prompts' own system messages. */
const BATCH_INSTRUCTION = [
  'You are given several independent requests, each with a row number.',
  'Answer each request on its own, exactly as you would answer it if it were the only one.',
  'Reply with one JSON object and nothing else: {"answers": [{"row": <row number>, "answer": "<your answer to that request>"}, …]},',
  'one entry per request, each row number exactly once.',
].join(' ');

/** The messages of one batch: the shared system messages, the instruction, then the rows numbered 1… */
export const batchMessages = (prompts: readonly LlmPrompt[]): ChatMessage[] => [
  ...prompts[0]!.messages.slice(0, -1),
  { role: 'system', content: BATCH_INSTRUCTION },
  {
    role: 'user',
    content: JSON.stringify({ requests: prompts.map((p, k) => ({ row: k + 1, request: questionOf(p) })) }),
  },
];

/** The batch's token limit: the rows' own limit each, with the JSON's overhead. */
export const batchMaxTokens = (perRow: number | undefined, rows: number): number | undefined =>
  perRow === undefined ? undefined : (perRow + ANSWER_OVERHEAD_TOKENS) * rows;

/** An answer asked as JSON, read (a Markdown code fence around it allowed); undefined when it is not JSON. */
export const jsonAnswer = (text: string): unknown => {
  try {
    return JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '')) as unknown;
  } catch {
    return undefined;
  }
};

/**
 * A batch's answer, by row (1…rows): only the rows answered exactly once with text. `undefined`:
 * the answer is not such an object at all (the provider does not follow the format).
 */
export const readBatchAnswer = (text: string, rows: number): Map<number, string> | undefined => {
  const parsed = jsonAnswer(text);
  const answers =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as { answers?: unknown }).answers
      : undefined;
  if (!Array.isArray(answers)) return undefined;
  const seen = new Map<number, number>();
  const out = new Map<number, string>();
  for (const entry of answers) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { row, answer } = entry as { row?: unknown; answer?: unknown };
    const n = typeof row === 'string' && /^\d+$/.test(row) ? Number(row) : row;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > rows) continue;
    seen.set(n, (seen.get(n) ?? 0) + 1);
    if (typeof answer === 'string') out.set(n, answer);
  }
  // A row named twice is nobody's: which of the two was meant for it cannot be told.
  for (const [n, times] of seen) if (times > 1) out.delete(n);
  return out;
};
