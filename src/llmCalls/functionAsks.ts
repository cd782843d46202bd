import type { LlmSettings } from '../engines/llm';
import type { LlmPrompt } from '../engines/llm/llmModelSpec';
import { askAll, LlmCallsCapExceeded, type AskOptions, type Asking } from './asking';
import type {
  ContextItem,
  GroupItem,
  LlmFunctionAnswer,
  LlmFunctionAsk,
  LlmFunctionKind,
} from '../engines/llm/functionAsk';
import { batchCharBudget, jsonAnswer } from './batching';
import type { Target } from './recording';

/** The SQL names of the functions, for messages. */
export const FUNCTION_NAMES: Record<LlmFunctionKind, string> = {
  llm: 'LLM()',
  filter: 'LLM_FILTER',
  reduce: 'LLM_REDUCE',
  rerank: 'LLM_RERANK',
};

/** Rows one LLM_RERANK ranks at most (for one prompt): they go in one request. */
const MAX_RERANK_ROWS = 50;
/** Rounds of LLM_REDUCE over a group too large for one request (partial answers reduced again). */
const MAX_REDUCE_ROUNDS = 6;

const FILTER_INSTRUCTION =
  'Decide whether the row meets the condition the request states. Answer with one word and nothing else: true or false.';
const REDUCE_INSTRUCTION =
  'Reduce the rows given to one answer, as the request asks (a summary, a choice, a count). Answer with the result only.';
const RERANK_INSTRUCTION =
  'Rank the documents by how relevant each is to the query, most relevant first. Reply with one JSON object and nothing else: {"ranking": [<document id>, …]}, every document id exactly once.';

/** What every ask of one query shares: where it goes, and its query's options. */
type FunctionRun = {
  readonly asking: Asking;
  readonly settings: LlmSettings;
  readonly project: string | null;
  readonly signal: AbortSignal | undefined;
  readonly options: AskOptions;
};

const targetOf = (run: FunctionRun, kind: LlmFunctionKind): Target => ({
  settings: run.settings,
  temperature: run.settings.temperature,
  maxTokens: run.settings.maxTokens,
  about: { project: run.project, model: null, modelVersion: null, source: 'function' },
  what: FUNCTION_NAMES[kind],
});

const ask = (
  run: FunctionRun,
  kind: LlmFunctionKind,
  prompts: readonly LlmPrompt[],
  refuses?: AskOptions['refuses'],
) =>
  askAll(
    run.asking,
    targetOf(run, kind),
    prompts,
    prompts.map((_, i) => i + 1),
    run.signal,
    { ...run.options, ...(refuses ? { refuses } : {}) },
  );

const instructed = (instruction: string, user: string, json = false): LlmPrompt => ({
  messages: [
    { role: 'system', content: instruction },
    { role: 'user', content: user },
  ],
  json,
});

/** LLM_FILTER's answer read strictly: `true` or `false` (any case, a closing full stop allowed). */
const booleanAnswer = (text: string): boolean | undefined => {
  const word = text
    .trim()
    .replace(/^["'`]|["'`.]$/g, '')
    .toLowerCase();
  return word === 'true' ? true : word === 'false' ? false : undefined;
};

const filterRows = async (run: FunctionRun, items: readonly ContextItem[]) => {
  const texts = await ask(
    run,
    'filter',
    items.map((item) =>
      instructed(FILTER_INSTRUCTION, `${item.prompt}\n\nRow: ${JSON.stringify(item.context)}`),
    ),
    (answer) => (booleanAnswer(answer) === undefined ? 'is not true or false' : null),
  );
  return texts.map((text) => booleanAnswer(text)!);
};

/** Lines into chunks of at most `budget` characters (a longer line goes alone), in order. */
const chunked = (lines: readonly string[], budget: number): string[][] => {
  const chunks: string[][] = [];
  let chunk: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (chunk.length > 0 && chars + line.length > budget) {
      chunks.push(chunk);
      chunk = [];
      chars = 0;
    }
    chunk.push(line);
    chars += line.length + 1;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
};

/**
 * One answer per group. A group whose rows exceed what one request carries for the model is
 * asked in chunks, and the chunks' answers reduced again (as flock does), until one is left.
 */
const reduceGroups = async (run: FunctionRun, items: readonly GroupItem[]) => {
  const budget = batchCharBudget(run.settings.model);
  const answers: (string | null)[] = items.map(() => null);
  let pending = items.map((item, group) => ({
    group,
    prompt: item.prompt,
    lines: item.rows.map((row) => JSON.stringify(row)),
    partial: false,
  }));
  for (let round = 0; pending.length > 0; round++) {
    if (round === MAX_REDUCE_ROUNDS)
      throw new LlmCallsCapExceeded(
        `LLM_REDUCE: a group is still too large for one request after ${MAX_REDUCE_ROUNDS} rounds of partial answers: reduce fewer or shorter values`,
      );
    const requests = pending.flatMap((p) =>
      chunked(p.lines, budget).map((lines) => ({
        group: p.group,
        prompt: instructed(
          REDUCE_INSTRUCTION,
          `${p.prompt}\n\n${p.partial ? 'Partial answers, each over part of the rows' : 'Rows'}:\n${lines.join('\n')}`,
        ),
      })),
    );
    const texts = await ask(
      run,
      'reduce',
      requests.map((r) => r.prompt),
    );
    const byGroup = new Map<number, string[]>();
    requests.forEach((r, k) => byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), texts[k]!]));
    pending = pending.flatMap((p) => {
      const parts = byGroup.get(p.group)!;
      if (parts.length === 1) {
        answers[p.group] = parts[0]!;
        return [];
      }
      return [{ ...p, lines: parts, partial: true }];
    });
  }
  return answers;
};

/** A ranking of `n` documents read from its JSON: ids 1…n, each once; undefined when it is not one. */
const rankingAnswer = (text: string, n: number): number[] | undefined => {
  const parsed = jsonAnswer(text);
  const ranking =
    typeof parsed === 'object' && parsed !== null && 'ranking' in parsed ? parsed.ranking : undefined;
  if (!Array.isArray(ranking) || ranking.length !== n) return undefined;
  const ids = ranking
    .map((id: unknown) => (typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id))
    .filter((id): id is number => typeof id === 'number' && Number.isInteger(id) && id >= 1 && id <= n);
  return ids.length === n && new Set(ids).size === n ? ids : undefined;
};

/**
 * Each row's rank among the rows of its prompt (1: most relevant). The rows of one prompt (and
 * one list of columns) go in one request, in a fixed order (sorted by their values, so the order
 * the query read them in does not change the request); the answer must rank each exactly once.
 */
const rerankRows = async (run: FunctionRun, items: readonly ContextItem[]) => {
  const lists = new Map<string, number[]>();
  items.forEach((item, i) => {
    const key = JSON.stringify([item.prompt, Object.keys(item.context)]);
    lists.set(key, [...(lists.get(key) ?? []), i]);
  });
  const ranks: number[] = items.map(() => 0);
  for (const members of lists.values()) {
    if (members.length > MAX_RERANK_ROWS)
      throw new LlmCallsCapExceeded(
        `LLM_RERANK ranks at most ${MAX_RERANK_ROWS} rows for one prompt, and this query has ${members.length}: rerank a subquery's first rows (SELECT … FROM (SELECT … FROM kb WHERE content = '…' ORDER BY relevance DESC LIMIT 20) AS hits ORDER BY LLM_RERANK(…)), or filter the rows`,
      );
    const order = [...members].sort((a, b) => {
      const x = JSON.stringify(items[a]!.context);
      const y = JSON.stringify(items[b]!.context);
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const documents = order.map((i, k) => ({ id: k + 1, ...items[i]!.context }));
    const [text] = await ask(
      run,
      'rerank',
      [instructed(RERANK_INSTRUCTION, JSON.stringify({ query: items[order[0]!]!.prompt, documents }), true)],
      (answer) =>
        rankingAnswer(answer, documents.length) === undefined
          ? `is not a ranking of its ${documents.length} rows (each id 1…${documents.length} once)`
          : null,
    );
    rankingAnswer(text!, documents.length)!.forEach((id, position) => {
      ranks[order[id - 1]!] = position + 1;
    });
  }
  return ranks;
};

/** One ask's answers, in its inputs' order. */
export const answerFunctionAsk = async (
  run: FunctionRun,
  asked: LlmFunctionAsk,
): Promise<LlmFunctionAnswer[]> => {
  switch (asked.kind) {
    case 'llm':
      return ask(
        run,
        'llm',
        asked.items.map((p) => ({ messages: [{ role: 'user' as const, content: p }], json: false })),
      );
    case 'filter':
      return filterRows(run, asked.items);
    case 'reduce':
      return reduceGroups(run, asked.items);
    case 'rerank':
      return rerankRows(run, asked.items);
    default: {
      const _exhaustive: never = asked;
      return _exhaustive;
    }
  }
};
