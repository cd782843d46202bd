import { NamedError } from '../../shared/errors';
import type { ChatMessage } from './types';

/**
 * An LLM model as MindsDB defines one (`CREATE MODEL m PREDICT answer USING engine = 'openai_engine',
 * prompt_template = 'Summarize: {{text}}', …`): what each row is turned into (the messages sent),
 * read from its USING options. Pure: the models slice checks a definition with it, the calls slice
 * renders rows with it.
 */

const LLM_MODES = ['default', 'conversational', 'conversational-full', 'json_struct'] as const;
type LlmMode = (typeof LLM_MODES)[number];

export type LlmModelSpec = {
  readonly mode: LlmMode;
  readonly target: string;
  readonly promptTemplate: string | null;
  readonly questionColumn: string | null;
  readonly contextColumn: string | null;
  /** conversational modes: the speaker columns of each row. */
  readonly userColumn: string | null;
  readonly assistantColumn: string | null;
  /** MindsDB's `prompt`: an instruction sent as the system message. */
  readonly instruction: string | null;
  /** json_struct: the keys of the object to extract, each with its description. */
  readonly jsonStruct: Readonly<Record<string, string>> | null;
  /** json_struct: the column holding the text to extract from (MindsDB's `input_text`). */
  readonly inputText: string | null;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
  /** The columns rows must have, in order of first use. */
  readonly inputs: readonly string[];
};

/** A definition (or a query's overrides) the model cannot run with: the message says what to fix. */
export class LlmSpecError extends NamedError {}

/** Longest prompt template (or instruction) a model keeps, in characters. */
const MAX_TEMPLATE_CHARS = 64_000;
const MAX_COLUMN_CHARS = 256;
const MAX_STRUCT_KEYS = 64;

/** The options a query may override with `USING …` (never where calls go, nor with which key). */
export const QUERY_OVERRIDES = ['prompt_template', 'max_tokens', 'temperature', 'prompt'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const optionalText = (options: Record<string, unknown>, key: string, max: number): string | null => {
  const v = options[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new LlmSpecError(`${key} must be text`);
  if (v.length > max) throw new LlmSpecError(`${key} is longer than ${max} characters`);
  return v;
};

const columnOption = (options: Record<string, unknown>, key: string): string | null => {
  const v = optionalText(options, key, MAX_COLUMN_CHARS);
  if (v === null) return null;
  if (v.trim() === '') throw new LlmSpecError(`${key} names no column`);
  return v.trim();
};

const numberOption = (
  options: Record<string, unknown>,
  key: string,
  check: (n: number) => boolean,
  rule: string,
): number | undefined => {
  const v = options[key];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || !check(n))
    throw new LlmSpecError(`${key} must be ${rule}, got ${JSON.stringify(v)?.slice(0, 40)}`);
  return n;
};

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The columns a template reads, `{{column}}`, in order of first appearance. */
const templateColumns = (template: string): string[] => {
  const out: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1]!;
    if (name === '') throw new LlmSpecError('prompt_template has an empty placeholder {{}}');
    if (name.length > MAX_COLUMN_CHARS)
      throw new LlmSpecError(`prompt_template names a column longer than ${MAX_COLUMN_CHARS} characters`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
};

/** A row's value by column name (the exact name first, then in any case); undefined: no such column. */
const valueIn = (
  row: Readonly<Record<string, unknown>>,
  column: string,
): { found: boolean; value: unknown } => {
  if (Object.prototype.hasOwnProperty.call(row, column)) return { found: true, value: row[column] };
  const lower = column.toLowerCase();
  for (const key of Object.keys(row))
    if (key.toLowerCase() === lower) return { found: true, value: row[key] };
  return { found: false, value: undefined };
};

/** How a value reads in a prompt: text as is, NULL as nothing, anything else as JSON. */
const promptText = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
};

const columnText = (row: Readonly<Record<string, unknown>>, column: string, what: string): string => {
  const { found, value } = valueIn(row, column);
  if (!found) throw new LlmSpecError(`${what} reads column ${column}, which the rows do not have`);
  return promptText(value);
};

/** `{{column}}` replaced by the row's value (one pass: a value holding `{{x}}` stays as it is). */
const renderTemplate = (template: string, row: Readonly<Record<string, unknown>>): string =>
  template.replace(PLACEHOLDER, (_, name: string) => columnText(row, name, 'prompt_template'));

/**
 * The model's definition, checked: its mode and what each row is turned into. `overrides` are a
 * query's `USING` (QUERY_OVERRIDES only) and win over the stored options.
 */
export const llmModelSpec = (
  target: string,
  stored: Readonly<Record<string, unknown>>,
  overrides: Readonly<Record<string, unknown>> = {},
): LlmModelSpec => {
  const refused = Object.keys(overrides).filter((k) => !(QUERY_OVERRIDES as readonly string[]).includes(k));
  if (refused.length)
    throw new LlmSpecError(
      `USING ${refused.join(', ')}: a query may override ${QUERY_OVERRIDES.join(', ')} only (where calls go, and with which key, is the model's and its engine's)`,
    );
  const options = { ...stored, ...overrides };
  const jsonStructRaw = options.json_struct;
  const modeRaw =
    options.mode ?? (jsonStructRaw !== undefined && jsonStructRaw !== null ? 'json_struct' : 'default');
  if (typeof modeRaw !== 'string' || !(LLM_MODES as readonly string[]).includes(modeRaw.toLowerCase()))
    throw new LlmSpecError(
      `mode must be one of ${LLM_MODES.join(', ')}, got ${JSON.stringify(modeRaw)?.slice(0, 40)}`,
    );
  const mode = modeRaw.toLowerCase() as LlmMode;
  const promptTemplate = optionalText(options, 'prompt_template', MAX_TEMPLATE_CHARS);
  const instruction = optionalText(options, 'prompt', MAX_TEMPLATE_CHARS);
  const questionColumn = columnOption(options, 'question_column');
  const contextColumn = columnOption(options, 'context_column');
  const userColumn = columnOption(options, 'user_column') ?? questionColumn;
  const assistantColumn = columnOption(options, 'assistant_column');
  const inputText = columnOption(options, 'input_text');
  const maxTokens = numberOption(
    options,
    'max_tokens',
    (n) => Number.isInteger(n) && n >= 1 && n <= 1_000_000,
    'a whole number from 1 to 1000000',
  );
  const temperature = numberOption(options, 'temperature', (n) => n >= 0 && n <= 2, 'a number from 0 to 2');
  let jsonStruct: Record<string, string> | null = null;
  if (mode === 'json_struct') {
    if (!isRecord(jsonStructRaw) || Object.keys(jsonStructRaw).length === 0)
      throw new LlmSpecError(
        "mode json_struct needs json_struct = {'key': 'what it holds', …}: the keys of the object to extract",
      );
    if (Object.keys(jsonStructRaw).length > MAX_STRUCT_KEYS)
      throw new LlmSpecError(`json_struct may have at most ${MAX_STRUCT_KEYS} keys`);
    jsonStruct = {};
    for (const [k, v] of Object.entries(jsonStructRaw)) {
      if (k.trim() === '' || k.length > MAX_COLUMN_CHARS)
        throw new LlmSpecError(`json_struct keys must be names of 1 to ${MAX_COLUMN_CHARS} characters`);
      jsonStruct[k] = promptText(v).slice(0, 1_000);
    }
    if (promptTemplate === null && inputText === null)
      throw new LlmSpecError(
        'mode json_struct needs input_text (the column to extract from) or prompt_template',
      );
  } else if (mode === 'default') {
    if (promptTemplate === null && questionColumn === null)
      throw new LlmSpecError(
        "an LLM model needs prompt_template = '… {{column}} …' or question_column = '<column>'",
      );
  } else if (userColumn === null)
    throw new LlmSpecError(`mode ${mode} needs user_column (or question_column): the column of each message`);
  const inputs: string[] = [];
  const use = (c: string | null) => {
    if (c !== null && !inputs.includes(c)) inputs.push(c);
  };
  if (promptTemplate !== null && mode !== 'conversational' && mode !== 'conversational-full')
    templateColumns(promptTemplate).forEach(use);
  else if (mode === 'default') {
    use(questionColumn);
    use(contextColumn);
  }
  if (mode === 'json_struct' && promptTemplate === null) use(inputText);
  if (mode === 'conversational' || mode === 'conversational-full') {
    use(userColumn);
    use(assistantColumn);
  }
  if (promptTemplate !== null) templateColumns(promptTemplate);
  return {
    mode,
    target,
    promptTemplate,
    questionColumn,
    contextColumn,
    userColumn,
    assistantColumn,
    instruction,
    jsonStruct,
    inputText,
    maxTokens,
    temperature,
    inputs,
  };
};

/** One request to the model: the messages, and whether the answer must be one JSON object. */
export type LlmPrompt = { readonly messages: readonly ChatMessage[]; readonly json: boolean };

const system = (spec: LlmModelSpec): ChatMessage[] =>
  spec.instruction !== null && spec.instruction !== '' ? [{ role: 'system', content: spec.instruction }] : [];

const jsonInstruction = (struct: Readonly<Record<string, string>>) =>
  `Answer with one JSON object and nothing else. Its keys, exactly these: ${Object.entries(struct)
    .map(([k, d]) => `${JSON.stringify(k)} (${d})`)
    .join(', ')}. Each value is a string, or null when the text does not say.`;

/** The question of one row in the default mode: the template filled in, or the question (with its context). */
const defaultQuestion = (spec: LlmModelSpec, row: Readonly<Record<string, unknown>>) => {
  if (spec.promptTemplate !== null) return renderTemplate(spec.promptTemplate, row);
  const question = columnText(row, spec.questionColumn!, 'question_column');
  if (spec.contextColumn === null) return question;
  const context = columnText(row, spec.contextColumn, 'context_column');
  return `Context: ${context}\nQuestion: ${question}\nAnswer:`;
};

/**
 * What each row asks: one prompt per row (null: the row is not asked, conversational's earlier
 * messages). conversational: the rows are one conversation and its last row is answered;
 * conversational-full: every row is answered, after the messages before it.
 */
export const promptsOf = (
  spec: LlmModelSpec,
  rows: readonly Readonly<Record<string, unknown>>[],
): (LlmPrompt | null)[] => {
  switch (spec.mode) {
    case 'default':
      return rows.map((row) => ({
        messages: [...system(spec), { role: 'user', content: defaultQuestion(spec, row) }],
        json: false,
      }));
    case 'json_struct':
      return rows.map((row) => ({
        messages: [
          {
            role: 'system',
            content: [spec.instruction, jsonInstruction(spec.jsonStruct!)].filter(Boolean).join('\n'),
          },
          {
            role: 'user',
            content:
              spec.promptTemplate !== null
                ? renderTemplate(spec.promptTemplate, row)
                : columnText(row, spec.inputText!, 'input_text'),
          },
        ],
        json: true,
      }));
    case 'conversational':
    case 'conversational-full': {
      const history: ChatMessage[] = [];
      const out: (LlmPrompt | null)[] = [];
      rows.forEach((row, i) => {
        const said = columnText(row, spec.userColumn!, 'user_column');
        const user: ChatMessage = {
          role: 'user',
          content:
            spec.promptTemplate !== null
              ? renderTemplate(spec.promptTemplate, { ...row, [spec.userColumn!]: said })
              : said,
        };
        const asks = spec.mode === 'conversational-full' || i === rows.length - 1;
        out.push(asks ? { messages: [...system(spec), ...history, user], json: false } : null);
        history.push(user);
        if (spec.assistantColumn !== null) {
          const { value } = valueIn(row, spec.assistantColumn);
          if (value !== null && value !== undefined)
            history.push({ role: 'assistant', content: promptText(value) });
        }
      });
      return out;
    }
    default: {
      const _exhaustive: never = spec.mode;
      return _exhaustive;
    }
  }
};

/**
 * The answer as the target column holds it: the text, or for json_struct the object (exactly the
 * struct's keys, JSON text). An answer that is not a JSON object is refused.
 */
export const answerValue = (spec: LlmModelSpec, text: string): string => {
  if (spec.mode !== 'json_struct') return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    throw new LlmSpecError('the model answered text that is not a JSON object (mode json_struct)');
  }
  if (!isRecord(parsed))
    throw new LlmSpecError('the model answered JSON that is not an object (mode json_struct)');
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(spec.jsonStruct!)) {
    const v = parsed[key];
    out[key] = v === undefined ? null : v;
  }
  return JSON.stringify(out);
};
