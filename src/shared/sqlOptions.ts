import { keyKind, type KeyKind } from './secretKeys';
import { isKeyword, SqlSyntaxError, significant, textOf, tokenize, type Token } from './sqlTokens';

/**
 * One value of a statement's options (`USING k = v, …`, `SET k = v, …`, `PARAMETERS = {…}`), where
 * it stands in the text: for a quoted string its content between the quotes (escapes as written),
 * for anything else (a number, a word) the value as written.
 */
type OptionValueSpan = {
  readonly start: number;
  readonly end: number;
  readonly quoted: boolean;
  /** How the value is masked, by the keys it stands under (every leaf under a secret key is secret). */
  readonly mode: KeyKind;
};

/**
 * A value already sealed in place (src/ledger/sealing.ts). Its ciphertext may hold `--` (a comment
 * to MySQL) and reads as several tokens, so it is read as one word of the same length.
 */
const SEALED = /enc:v1:[A-Za-z0-9_.-]{1,128}:[A-Za-z0-9_-]+/g;

/** Texts longer than this are not read for options (a statement that long is refused anyway). */
const MAX_TEXT = 1_000_000;

/** A word that may open an option list, and which (cheaply) must appear for any to be read. */
const OPENERS = /\b(?:using|set|parameters)\b/i;

/**
 * The values of every option list in a SQL text (jobs and triggers hold statements such as
 * `CREATE DATABASE d WITH ENGINE = 'postgres', PARAMETERS = {"password": "…"}` or
 * `CREATE MODEL m … USING api_key = '…'`), read by the grammar's rules for option lists
 * (src/sql/grammar.ts `assignments`, `object`, `value`) over the one tokenizer, so a value is found
 * as the statement's parser reads it, never by a pattern over the text. Where a list stops reading as
 * options (`UPDATE t SET a = a + 1`), the values read up to there are kept. Text that cannot be
 * tokenized (an unclosed quote) has no options.
 */
export const sqlOptionValues = (written: string): OptionValueSpan[] => {
  if (written.length > MAX_TEXT || !OPENERS.test(written)) return [];
  const text = written.includes('enc:v1:') ? written.replace(SEALED, (m) => 'x'.repeat(m.length)) : written;
  let tokens: readonly Token[];
  try {
    tokens = significant(tokenize(text, 'mysql-client'));
  } catch (error) {
    if (error instanceof SqlSyntaxError) return [];
    throw error;
  }
  const found: OptionValueSpan[] = [];
  const symbol = (k: number, c: string) => {
    const t = tokens[k];
    return t !== undefined && t.kind === 'symbol' && text[t.start] === c;
  };

  /**
   * Reads one value at token `k` under `mode`; returns the index after it, or -1 when no value
   * starts there. Containers are read with an explicit stack of their own (values may nest deep).
   */
  const readValue = (k: number, mode: KeyKind): number => {
    type Frame = { close: '}' | ']'; mode: KeyKind; first: boolean };
    const stack: Frame[] = [];
    let i = k;
    let valueMode = mode;
    for (;;) {
      // A value at i.
      const t = tokens[i];
      if (t === undefined) return -1;
      if (t.kind === 'string' || t.kind === 'dquoted') {
        found.push({ start: t.start + 1, end: t.end - 1, quoted: true, mode: valueMode });
        i++;
      } else if (t.kind === 'number' || t.kind === 'word') {
        if (!isKeyword(text, t, 'NULL'))
          found.push({ start: t.start, end: t.end, quoted: false, mode: valueMode });
        i++;
      } else if (symbol(i, '-') && tokens[i + 1]?.kind === 'number' && tokens[i + 1]!.start === t.end) {
        found.push({ start: t.start, end: tokens[i + 1]!.end, quoted: false, mode: valueMode });
        i += 2;
      } else if (symbol(i, '{') || symbol(i, '[')) {
        stack.push({ close: symbol(i, '{') ? '}' : ']', mode: valueMode, first: true });
        i++;
      } else return -1;

      // After a value (or an opening bracket): the next member, the next item, or closings.
      for (;;) {
        const frame = stack[stack.length - 1];
        if (frame === undefined) return i;
        if (symbol(i, frame.close)) {
          stack.pop();
          i++;
          continue;
        }
        if (!frame.first) {
          if (!symbol(i, ',')) return -1;
          i++;
          // A trailing comma before the closing bracket, as the grammar allows.
          if (symbol(i, frame.close)) continue;
        }
        frame.first = false;
        if (frame.close === ']') {
          valueMode = frame.mode;
          break;
        }
        // A member: "key" or key, then `:` (MySQL reads `:name` as one placeholder token).
        const key = tokens[i];
        if (key === undefined || !['string', 'dquoted', 'word', 'identifier'].includes(key.kind)) return -1;
        const name = key.kind === 'word' ? textOf(text, key) : textOf(text, key).slice(1, -1);
        const memberMode = frame.mode === 'secret' ? 'secret' : keyKind(name);
        const colon = tokens[i + 1];
        if (colon?.kind === 'placeholder' && text[colon.start] === ':') {
          // `key:value` without blanks: the value is the word after the colon.
          found.push({ start: colon.start + 1, end: colon.end, quoted: false, mode: memberMode });
          i += 2;
          continue;
        }
        if (!symbol(i + 1, ':')) return -1;
        i += 2;
        valueMode = memberMode;
        break;
      }
    }
  };

  /** `key = value, …` from token `k`, as far as it reads as options. */
  const readAssignments = (k: number) => {
    let i = k;
    for (;;) {
      const key = tokens[i];
      if (key === undefined || !['word', 'identifier', 'dquoted'].includes(key.kind) || !symbol(i + 1, '='))
        return;
      const name = key.kind === 'word' ? textOf(text, key) : textOf(text, key).slice(1, -1);
      const next = readValue(i + 2, keyKind(name));
      if (next === -1) return;
      i = next;
      if (!symbol(i, ',')) return;
      i++;
    }
  };

  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (isKeyword(text, t, 'USING') || isKeyword(text, t, 'SET')) readAssignments(k + 1);
    else if (isKeyword(text, t, 'PARAMETERS') && symbol(k + 1, '=')) readValue(k + 2, 'plain');
  }
  return found;
};
