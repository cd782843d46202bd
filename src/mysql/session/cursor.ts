import { isKeyword, textOf, unquoted, type Token } from '../../shared/sqlTokens';

/** A statement's significant tokens (no blanks, no comments) with a cursor, for the small parsers of classify. */
export class Cursor {
  at = 0;
  constructor(
    readonly tokens: readonly Token[],
    readonly sql: string,
  ) {}

  get done() {
    return this.at >= this.tokens.length;
  }
  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }
  text(t: Token) {
    return textOf(this.sql, t);
  }
  isWord(word: string, offset = 0) {
    return isKeyword(this.sql, this.peek(offset), word);
  }
  isSymbol(symbol: string, offset = 0) {
    const t = this.peek(offset);
    return t?.kind === 'symbol' && this.text(t) === symbol;
  }
  acceptWord(...words: string[]) {
    const t = this.peek();
    const word = t?.kind === 'word' ? this.text(t).toUpperCase() : undefined;
    if (word === undefined || !words.includes(word)) return undefined;
    this.at++;
    return word;
  }
  acceptSymbol(symbol: string) {
    if (!this.isSymbol(symbol)) return false;
    this.at++;
    return true;
  }
  /** `=` or `:=` (two symbols side by side). */
  acceptAssignment() {
    if (this.acceptSymbol('=')) return true;
    const colon = this.peek();
    const equals = this.peek(1);
    if (!this.isSymbol(':') || !this.isSymbol('=', 1) || colon!.end !== equals!.start) return false;
    this.at += 2;
    return true;
  }
  /** A name: a word or a `quoted` identifier. */
  name(): string | undefined {
    const t = this.peek();
    if (t?.kind !== 'word' && t?.kind !== 'identifier') return undefined;
    this.at++;
    return t.kind === 'identifier' ? unquoted(this.sql, t) : this.text(t);
  }
  /** A 'string' or "string". */
  string(): string | undefined {
    const t = this.peek();
    if (t?.kind !== 'string' && t?.kind !== 'dquoted') return undefined;
    this.at++;
    return unquoted(this.sql, t);
  }
  /** The source text from the current token to the end. */
  rest() {
    const t = this.peek();
    return t ? this.sql.slice(t.start).trim() : '';
  }
}
