import { z } from 'zod';
import type { Api } from '../http/api';
import { VERSION } from '../shared/version';
import type { ReadModelDigest } from '../projection/digest';
import type { ProjectionFailure } from '../projection/runner';

/** What the status reports of this process's read model. */
export type ReadModelStatus = {
  digest(): Promise<ReadModelDigest>;
  /** Moves with every applied batch: the digest is computed once per version. */
  version(): number;
  /** The event the read model is stopped at, if any. */
  failure?(): ProjectionFailure | null;
  /** Why the read model was last rebuilt for not belonging to the log, if it was. */
  rebuildReason?(): string | null;
  /** Events projections pass over by the operator's word (PROJECTION_SKIP). */
  skippedEvents?(): readonly string[];
};

const failureSchema = z
  .object({
    position: z
      .string()
      .nullable()
      .describe('The event that cannot be applied (null: reading the log failed)'),
    event_type: z.string().nullable(),
    projection: z.string().nullable().describe('The table or schema projection that failed'),
    error: z.string(),
    since: z.string(),
    attempts: z.number().int(),
    next_attempt_at: z.string(),
  })
  .nullable()
  .describe(
    'null while the read model follows the log; otherwise it is stopped at this event (retried with back-off, writes answer 503)',
  );

const presentFailure = (f: ProjectionFailure | null | undefined) =>
  f
    ? {
        position: f.position?.toString() ?? null,
        event_type: f.eventType,
        projection: f.projection,
        error: f.error,
        since: f.since,
        attempts: f.attempts,
        next_attempt_at: new Date(f.retryAt).toISOString(),
      }
    : null;

const tableDigestSchema = z.object({ table: z.string(), rows: z.number().int(), hash: z.string() });
const readModelSchema = z
  .object({
    position: z
      .string()
      .describe('The log position the projections include (global position of the last applied event)'),
    digest: z
      .string()
      .describe("sha256 over every table's row count and content hash: equal on replicas at one position"),
    tables: z.array(tableDigestSchema),
    failed: failureSchema,
    skipped: z
      .array(z.string())
      .describe(
        "Events a projection passes over by the operator's word (PROJECTION_SKIP), as <position>:<projection>: that table lacks what they hold",
      ),
    rebuilt_because: z
      .string()
      .nullable()
      .describe(
        'null, or why this process found its read model did not belong to the log (an older copy of the log restored, another log) and rebuilt it from the log',
      ),
  })
  .describe('The read model of the process that answered: compare two replicas, or a replica and a replay');

export { VERSION };

export const systemRoutes = (
  api: Api,
  readModel: ReadModelStatus,
  auth: { authEnabled: () => Promise<boolean> } = { authEnabled: async () => false },
) => {
  let cached: { version: number; digest: Promise<ReadModelDigest> } | null = null;
  const currentDigest = () => {
    const version = readModel.version();
    if (!cached || cached.version !== version) {
      const digest = readModel.digest();
      cached = { version, digest };
      digest.catch(() => (cached = null));
    }
    return cached.digest;
  };
  return api
    .add({
      method: 'get',
      path: '/api/util/ping',
      tag: 'util',
      summary: 'Liveness',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: async () => ({ status: 200, body: { status: 'ok' } }),
    })
    .add({
      method: 'get',
      path: '/api/status',
      tag: 'util',
      summary: 'Version and auth status, as MindsDB reports them',
      responses: {
        200: {
          description: 'Status',
          schema: z.object({
            mindsdb_version: z.string(),
            environment: z.string(),
            auth: z.object({ http_auth_enabled: z.boolean(), confirmed: z.boolean(), provider: z.string() }),
            read_model: readModelSchema,
          }),
        },
      },
      handle: async () => {
        const { position, digest, tables } = await currentDigest();
        const enabled = await auth.authEnabled();
        return {
          status: 200,
          body: {
            mindsdb_version: VERSION,
            environment: 'local',
            auth: {
              http_auth_enabled: enabled,
              confirmed: true,
              provider: enabled ? 'mindledger' : 'disabled',
            },
            read_model: {
              position,
              digest,
              tables,
              failed: presentFailure(readModel.failure?.()),
              skipped: [...(readModel.skippedEvents?.() ?? [])],
              rebuilt_because: readModel.rebuildReason?.() ?? null,
            },
          },
        };
      },
    });
};
