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
