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

/** Chat channels (a chatbot's `database`): connections to a messaging service, not tables. */
const channelParameters = {
  slack: z
    .object({
      token: z.string().min(1),
      signing_secret: z.string().min(1).optional(),
    })
    .catchall(z.unknown()),
  telegram: z.object({ token: z.string().min(1) }).catchall(z.unknown()),
  webhook: z
    .object({
      url: z.url().refine((u) => /^https?:/i.test(u), 'must be an http(s) URL'),
      secret: z.string().min(1).optional(),
    })
    .catchall(z.unknown()),
} as const;

const CHANNEL_ENGINES = Object.keys(channelParameters) as (keyof typeof channelParameters)[];
export const isChannelEngine = (engine: string) =>
  (CHANNEL_ENGINES as readonly string[]).includes(engine.toLowerCase());

const engines = {
  postgres: sqlServerParameters,
  mysql: sqlServerParameters,
  mariadb: sqlServerParameters,
  ...channelParameters,
} as const;

type EngineName = keyof typeof engines;
const engineNames = Object.keys(engines) as EngineName[];

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
