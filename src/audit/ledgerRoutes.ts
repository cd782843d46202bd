import { z } from 'zod';
import type { Api } from '../http/api';
import type { AuditLedger } from './ledger';
import { messageOf } from '../shared/errors';
import { stripServerPaths } from '../http/serverPaths';

const base64 = z.string().describe('base64');

/** The ledger for auditors: verify the log, signed checkpoints, inclusion and consistency proofs. */
export const ledgerRoutes = (api: Api, ledger: AuditLedger) => proofRoutes(verifyRoute(api, ledger), ledger);

/** Verify the whole log, answered at once or as a stream of progress events. */
const verifyRoute = (api: Api, ledger: AuditLedger) =>
  api.add({
    method: 'get',
    path: '/api/audit/verify',
    tag: 'audit',
    summary:
      'Recompute the hash tree from the log and check every signed checkpoint (what `npm run verify` does)',
    responses: {
      200: {
        description:
          '{ok: true, events, rootHash, checkpointsVerified, uncheckpointed} or {ok: false, problem, detail, position, leafIndex, …} naming the first event that fails',
        schema: z.object({ ok: z.boolean() }).loose(),
      },
    },
    query: z.object({
      progress: z
        .enum(['true', 'false'])
        .optional()
        .describe(
          'true: answer as text/event-stream, progress events then the result (also with Accept: text/event-stream)',
        ),
      every: z.coerce
        .number()
        .int()
        .min(1)
        .max(10_000_000)
        .optional()
        .describe('Events between two progress events (default 65,536)'),
    }),
    handle: async ({ query, headers }) => {
      const streamed =
        query.progress === 'true' ||
        (query.progress === undefined && /text\/event-stream/.test(headers.accept ?? ''));
      if (!streamed) return { status: 200, body: await ledger.verify() };
      const total = await ledger.logSize();
      return {
        status: 200,
        eventStream: {
          produce: async (send, signal) => {
            send({ type: 'start', total_events: total });
            const result = await ledger.verify({
              every: query.every,
              signal,
              onProgress: (p) =>
                send({
                  type: 'progress',
                  events: p.events,
                  total_events: Math.max(total, p.events),
                  position: p.position === null ? null : Number(p.position),
                  checkpoints_verified: p.checkpointsVerified,
                }),
            });
            send({ type: 'result', ...result });
          },
          onError: (error) => ({
            type: 'error',
            detail: stripServerPaths(messageOf(error)),
          }),
        },
      };
    },
  });

/** Signed checkpoints, and the proofs that check an event's place and the log's growth against them. */
const proofRoutes = (api: Api, ledger: AuditLedger) =>
  api
    .add({
      method: 'get',
      path: '/api/audit/checkpoints',
      tag: 'audit',
      summary: 'The signed checkpoints (tree size, root, signed note) and the public key that verifies them',
      responses: {
        200: {
          description: 'Oldest first',
          schema: z.object({
            public_key: z.object({ pem: z.string(), fingerprint: z.string(), origin: z.string() }),
            checkpoints: z.array(
              z.object({
                tree_size: z.number().int(),
                root_hash: base64,
                last_position: z.number().int(),
                signed_at: z.string(),
                key_fingerprint: z.string(),
                note: z.string(),
              }),
            ),
          }),
        },
      },
      handle: async () => ({
        status: 200,
        body: {
          public_key: ledger.publicKey(),
          checkpoints: (await ledger.checkpoints()).map((c) => ({
            tree_size: c.treeSize,
            root_hash: c.rootHash,
            last_position: Number(c.lastPosition),
            signed_at: c.signedAt,
            key_fingerprint: c.keyFingerprint,
            note: c.note,
          })),
        },
      }),
    })
    .add({
      method: 'get',
      path: '/api/audit/proof/:position',
      tag: 'audit',
      summary: 'RFC 9162 inclusion proof of the event at a global position, against the latest checkpoint',
      params: z.object({ position: z.coerce.number().int().min(1) }),
      responses: {
        200: {
          description: 'The leaf, its index, the proof and the checkpoint it proves against',
          schema: z
            .object({
              leaf_index: z.number().int(),
              tree_size: z.number().int(),
              leaf: z
                .string()
                .optional()
                .describe('The canonical leaf text (absent for an event holding a secret)'),
              leaf_hash: base64,
              inclusion_path: z.array(base64),
            })
            .loose(),
        },
        404: { description: 'No such event, or not checkpointed yet' },
      },
      handle: async ({ params }) => ({ status: 200, body: await ledger.inclusion(BigInt(params.position)) }),
    })
    .add({
      method: 'get',
      path: '/api/audit/consistency',
      tag: 'audit',
      summary: 'RFC 9162 consistency proof between two checkpointed tree sizes: the log only grew',
      query: z.object({
        from: z.coerce.number().int().min(1).describe('An earlier checkpoint’s tree size'),
        to: z.coerce
          .number()
          .int()
          .min(1)
          .optional()
          .describe('A later checkpoint’s tree size (default: the latest)'),
      }),
      responses: {
        200: {
          description: 'Both roots, both signed notes and the proof',
          schema: z
            .object({ first: z.number().int(), second: z.number().int(), consistency_path: z.array(base64) })
            .loose(),
        },
        404: { description: 'A size that is not a checkpoint' },
      },
      handle: async ({ query }) => ({ status: 200, body: await ledger.consistency(query.from, query.to) }),
    });
