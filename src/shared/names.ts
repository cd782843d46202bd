import { z } from 'zod';

/** A plain word as SQL names go: letters, digits and underscore, not starting with a digit. */
export const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** MindsDB-style identifiers: plain words (`PLAIN_NAME`). */
export const resourceName = (what: string) =>
  z
    .string({ error: `${what} name must be a string` })
    .min(1, `${what} name must not be empty`)
    .max(63, `${what} name must be at most 63 characters`)
    .regex(
      PLAIN_NAME,
      `${what} name may contain only letters, digits and underscores, and must not start with a digit`,
    );

/** Names are unique case-insensitively; this is the key they are compared and streamed by. */
export const nameKey = (name: string) => name.toLowerCase();

/**
 * The databases every MindsDB server has: its system schema, the uploaded files, and `log` (where
 * MindsDB keeps job history). None of these names can be a project or an integration.
 */
export const SYSTEM_DATABASES = {
  informationSchema: 'information_schema',
  files: 'files',
  log: 'log',
} as const;
const SYSTEM_DATABASE_NAMES: readonly string[] = Object.values(SYSTEM_DATABASES);
export const isSystemDatabaseName = (name: string) => SYSTEM_DATABASE_NAMES.includes(nameKey(name));

/** The DuckDB schema holding one table per uploaded file (`files.<name>` in SQL). */
export const FILES_SCHEMA = 'mdb_files';

/**
 * A name as SQL writes it, split at its dots: `mindsdb.kb`, `` `my project`.`kb` ``, `"p"."kb"`
 * (a quoted part may hold dots; a doubled quote is one). Unbalanced quotes: the text is one name.
 */
export const nameParts = (text: string): string[] => {
  const parts: string[] = [];
  let i = 0;
  while (i <= text.length) {
    const quote = text[i];
    if (quote === '`' || quote === '"') {
      let part = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) return [text];
        if (text[j] === quote) {
          if (text[j + 1] === quote) {
            part += quote;
            j += 2;
            continue;
          }
          break;
        }
        part += text[j++];
      }
      parts.push(part);
      i = j + 1;
      if (i < text.length && text[i] !== '.') return [text];
    } else {
      const end = text.indexOf('.', i);
      parts.push(text.slice(i, end === -1 ? text.length : end).trim());
      i = end === -1 ? text.length : end;
    }
    if (i >= text.length) break;
    i++;
  }
  return parts.some((p) => p === '') ? [text] : parts;
};
