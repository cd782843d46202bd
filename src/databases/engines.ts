import { z } from 'zod';
import { invalid } from '../shared/errors';

/**
 * Connection parameters per engine. Unknown extra keys (sslmode, …) are kept: drivers take many
 * options and MindsDB passes them through.
 */
const sqlServerParameters = z
  .object({
    host: z.string().min(1),
    port: z.union([z.number().int().min(1).max(65535), z.string().regex(/^\d+$/)]).optional(),
    user: z.string().min(1),
    password: z.string().optional(),
    database: z.string().min(1),
    schema: z.string().optional(),
  })
  .catchall(z.unknown());

export const engines = {
  postgres: sqlServerParameters,
  mysql: sqlServerParameters,
  mariadb: sqlServerParameters,
} as const;

export type EngineName = keyof typeof engines;
export const engineNames = Object.keys(engines) as EngineName[];

export const validateConnection = (engine: string, parameters: unknown): Record<string, unknown> => {
  const schema = (engines as Record<string, z.ZodType<Record<string, unknown>>>)[engine.toLowerCase()];
  if (!schema)
    throw invalid(
      `Unknown engine '${engine}'; supported engines: ${engineNames.join(', ')}`,
      'Unknown engine',
    );
  const result = schema.safeParse(parameters ?? {});
  if (!result.success)
    throw invalid(
      result.error.issues.map((i) => `parameters.${i.path.join('.')}: ${i.message}`).join('; '),
      'Invalid connection parameters',
    );
  return result.data;
};
