import type { MindsStatement } from './parse';

/**
 * What a statement was, as a bounded set of names (a metric label, a log field): never its text.
 * `select` covers SELECT and WITH; MindsDB's statements are named by the grammar's kind
 * (`create_model`, `show`); `forbidden` and `invalid` were refused before they ran.
 */
export type StatementKind = 'select' | 'forbidden' | 'invalid' | SnakeCase<MindsStatement['kind']>;

type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? Tail extends Uncapitalize<Tail>
    ? `${Lowercase<Head>}${SnakeCase<Tail>}`
    : `${Lowercase<Head>}_${SnakeCase<Tail>}`
  : S;

/** `CreateModel` → `create_model`. */
export const statementKindOf = (kind: MindsStatement['kind']): StatementKind =>
  kind.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase() as StatementKind;

/** The SQL caches whose look-ups are counted (docs/operating.md, "Health, readiness and metrics"). */
export type SqlCacheName =
  /**
   * The one cache of answers: whole answers by the statement's text (as sent, or as rewritten for
   * DuckDB), database and parameters (a dashboard polling); one look-up counted per SELECT.
   */
  | 'answer'
  /** Parsed, resolved and planned SELECTs (DuckDB's parse and name resolution skipped): plans, not answers. */
  | 'statement';

/**
 * What the SQL service reports to whoever watches it (the operator's metrics); a port it declares,
 * which the composition root fills, so src/sql knows nothing of metrics.
 */
export type SqlObserver = {
  /** A statement was answered (or refused): what it was, how, how long it took, and its error code. */
  readonly answered: (answer: {
    kind: StatementKind;
    outcome: 'ok' | 'table' | 'error';
    seconds: number;
    errorCode?: number;
  }) => void;
  readonly cacheLookup: (cache: SqlCacheName, hit: boolean) => void;
};

export const unobserved: SqlObserver = { answered: () => undefined, cacheLookup: () => undefined };
