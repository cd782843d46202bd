import { z } from 'zod';
import type { Artifact } from './artifact';

const header = z.object({
  schemaVersion: z.union([z.literal(1), z.literal(2)]),
  engine: z.enum(['mindledger-tabular', 'mindledger-timeseries']),
  target: z.string(),
  task: z.enum(['regression', 'classification', 'forecast']),
  columns: z.array(z.object({ name: z.string(), dtype: z.string() })),
  training: z.object({ rows: z.number(), accuracy: z.number(), metric: z.string() }),
});

class ArtifactError extends Error {}

/**
 * Reads a stored artifact (either schema), checking the header it is dispatched on. A schema this
 * engine does not know (written by a newer version) is refused with a message rather than misread.
 */
export const readArtifact = (json: string): Artifact => {
  const parsed: unknown = JSON.parse(json);
  const check = header.safeParse(parsed);
  if (!check.success) {
    const version = (parsed as { schemaVersion?: unknown } | null)?.schemaVersion;
    throw new ArtifactError(
      typeof version === 'number' && version > 2
        ? `This model was trained by a newer engine (artifact schema ${version}); this version reads 1 and 2`
        : `Not a model artifact: ${check.error.issues[0]?.message ?? 'unreadable'}`,
    );
  }
  return parsed as Artifact;
};
