import { storableText } from './jsonBounds';
import { z } from 'zod';

/** Skill, agent and chatbot names: MindsDB accepts any identifier, so only the obviously broken are refused. */
export const looseName = (what: string, field = 'name') =>
  z
    .string({ error: `Missing "${field}" field for ${what}` })
    .trim()
    .min(1, `"${field}" of a ${what} must not be empty`)
    .max(255, `"${field}" of a ${what} must be at most 255 characters`)
    .refine(
      (s) => ![...s].some((c) => c === '/' || c.charCodeAt(0) < 32),
      `"${field}" of a ${what} must not contain "/" or control characters`,
    );

/** Free-form parameters; on updates a key sent as null removes it. */
export const params = z.record(z.string(), z.unknown());

/**
 * `DELETE …?forget=true`: besides deleting the resource, forget its secrets for good (their data
 * keys are destroyed; the log keeps only ciphertext nobody can open: crypto-shredding).
 */
export const forgetQuery = z.object({
  forget: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((v) => v === 'true' || v === '1'),
});

/** Text that can be stored and read back everywhere, 1 to `max` characters: no NUL, no half of a surrogate pair. */
export const wellFormedText = (max: number) =>
  z.string().min(1).max(max).refine(storableText, 'must be text without NUL or lone surrogates');

/** `db.table`: a database (or project) and a table of it, as an evaluation's test table is named. */
export const qualifiedTableName = wellFormedText(300).refine(
  (s) => /^[^.]+\.[^.]+$/.test(s),
  'must name a database and a table: db.table',
);
