import { z } from 'zod';

/** MindsDB-style identifiers: letters, digits and underscore, not starting with a digit. */
export const resourceName = (what: string) =>
  z
    .string({ error: `${what} name must be a string` })
    .min(1, `${what} name must not be empty`)
    .max(63, `${what} name must be at most 63 characters`)
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
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
export const SYSTEM_DATABASE_NAMES: readonly string[] = Object.values(SYSTEM_DATABASES);
export const isSystemDatabaseName = (name: string) => SYSTEM_DATABASE_NAMES.includes(nameKey(name));

/** The DuckDB schema holding one table per uploaded file (`files.<name>` in SQL). */
export const FILES_SCHEMA = 'mdb_files';
