import crypto from 'node:crypto';

/** Rows of a result a digest covers: the SQL tool's own cap, so a replay digests what the tool saw. */
export const DIGEST_ROWS = 100;

/** Values as a digest reads them: BigInt as its digits, dates as ISO text, bytes as base64. */
const canonical = (_key: string, v: unknown): unknown => {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return v;
};

/**
 * A tool result's digest: sha256 of the canonical JSON of its columns, its first DIGEST_ROWS rows
 * (values and order) and how many of them there are. Equal digests, equal answers (as far as the
 * rows the tool could see); an agent run records it, a replay compares it with today's.
 */
export const resultDigest = (columns: readonly string[], rows: readonly (readonly unknown[])[]): string => {
  const seen = rows.slice(0, DIGEST_ROWS);
  return crypto
    .createHash('sha256')
    .update(JSON.stringify({ columns, rows: seen, row_count: seen.length }, canonical))
    .digest('hex');
};
