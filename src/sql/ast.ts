import type { DuckDBConnection } from '@duckdb/node-api';
import { scalarOn } from '../duckdb/scalar';
import { SqlError, SqlErrorCode } from './errors';

export type AstNode = { [key: string]: unknown };

// JSON numbers beyond 2^53 (query locations, BIGINT literals) would be rounded by JSON.parse: they
// travel through the tree as marked strings and are put back verbatim.
const BIG = '__mindledger_big__';
const protectBigNumbers = (json: string) =>
  json.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,}\]])/g, `$1"${BIG}$2"`);
const restoreBigNumbers = (json: string) => json.replace(new RegExp(`"${BIG}(-?\\d+)"`, 'g'), '$1');

/**
 * SELECTs (UNION branches, subqueries, CTE bodies) a query may hold. DuckDB plans a UNION ALL of
 * n branches in time that grows faster than n² and does not stop for an interrupt while it does
 * (5,000 branches: 1.6 s, 10,000: 10 s, 20,000: 97 s); its own max_expression_depth (1000)
 * bounds joins and nested subqueries but not set operations.
 */
export const MAX_QUERY_BLOCKS = 1000;

const tooManySelects = () =>
  new SqlError(
    SqlErrorCode.TooLarge,
    `The query holds more than ${MAX_QUERY_BLOCKS} SELECTs (UNION branches, subqueries, CTEs); split it, or send rows as VALUES or a list parameter`,
  );

/**
 * Counted in the serialised tree before it is parsed into objects (20,000 branches are 12 MB of
 * JSON). The marker cannot occur inside a string value, where its quotes would be escaped.
 */
const refuseTooManySelects = (json: string) => {
  const marker = '"type":"SELECT_NODE"';
  let count = 0;
  for (let at = json.indexOf(marker); at !== -1; at = json.indexOf(marker, at + marker.length))
    if (++count > MAX_QUERY_BLOCKS) throw tooManySelects();
};

const SERIALIZE = 'SELECT json_serialize_sql($1::VARCHAR)';
const DESERIALIZE = 'SELECT json_deserialize_sql($1::JSON)';

/** DuckDB's own parser: a SELECT becomes its syntax tree; anything else is refused by the parser. */
export const parseSelect = async (c: DuckDBConnection, sql: string): Promise<AstNode> => {
  // A SELECT the service has not seen is parsed and printed around its run: one trip to DuckDB each.
  const raw = String(await scalarOn(c, SERIALIZE, sql));
  refuseTooManySelects(raw);
  const parsed = JSON.parse(protectBigNumbers(raw)) as {
    error: boolean;
    error_type?: string;
    error_message?: string;
    statements?: AstNode[];
  };
  if (parsed.error) {
    if (/Only SELECT statements/i.test(parsed.error_message ?? ''))
      throw new SqlError(
        SqlErrorCode.Forbidden,
        'Only SELECT queries and MindsDB statements are allowed: resources change through CREATE/UPDATE/DROP of projects, databases, skills, agents and chatbots',
      );
    throw new SqlError(SqlErrorCode.Syntax, parsed.error_message ?? 'The query does not parse');
  }
  const statements = parsed.statements ?? [];
  if (statements.length !== 1)
    throw new SqlError(SqlErrorCode.Syntax, `One statement per request, got ${statements.length}`);
  return statements[0]!;
};

export const printSelect = async (c: DuckDBConnection, statement: AstNode): Promise<string> => {
  const json = restoreBigNumbers(JSON.stringify({ error: false, statements: [statement] }));
  return String(await scalarOn(c, DESERIALIZE, json));
};

/**
 * A CONSTANT node's value as JavaScript: DECIMAL literals (`0.5` is DECIMAL(2,1), stored as 5)
 * scaled back, numbers beyond 2^53 as their digits.
 */
export const constantValue = (node: AstNode): unknown => {
  const v = node.value as {
    is_null: boolean;
    value: unknown;
    type: { id: string; type_info?: { scale?: number } | null };
  };
  if (v.is_null) return null;
  const raw = typeof v.value === 'string' && v.value.startsWith(BIG) ? v.value.slice(BIG.length) : v.value;
  if (v.type.id === 'DECIMAL') {
    const scale = v.type.type_info?.scale ?? 0;
    const digits = String(raw);
    if (scale === 0) return Number(digits);
    const negative = digits.startsWith('-');
    const padded = (negative ? digits.slice(1) : digits).padStart(scale + 1, '0');
    return Number(`${negative ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`);
  }
  return raw;
};

/** Visits every object in the tree (depth first), letting the visitor replace fields in place. */
export { tooManySelects };

export const walk = async (node: unknown, visit: (n: AstNode) => Promise<void> | void): Promise<void> => {
  if (Array.isArray(node)) {
    for (const child of node) await walk(child, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  await visit(node as AstNode);
  for (const value of Object.values(node as AstNode)) await walk(value, visit);
};
