import { z } from 'zod';
import type { RecordedEvent } from '../../events';
import type { Api } from '../http/api';
import type { EventLog } from '../eventlog/types';
import { maskSecrets } from '../shared/secrets';
import { toMindsDbTimestamp } from '../shared/time';

const eventsQuery = z.object({
  after: z.coerce.number().int().min(0).default(0).describe('Global position to start after'),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  stream: z.string().min(1).optional(),
});

const eventView = z.object({
  position: z.number().int(),
  stream: z.string(),
  stream_position: z.number().int(),
  event_id: z.string(),
  type: z.string(),
  schema_version: z.number().int(),
  data: z.unknown().describe('Secrets are shown as "******"'),
  recorded_at: z.string(),
  actor: z.string().nullable().describe('user:<id>, token:<id>, address:<client address> or system'),
  request_id: z.string().nullable(),
  interface: z.string().nullable().describe('rest, sql, mysql, agent, chatbot or system'),
});

const present = (e: RecordedEvent) => ({
  position: e.meta.position,
  stream: e.meta.stream,
  stream_position: e.meta.streamPosition,
  event_id: e.meta.eventId,
  type: e.type,
  schema_version: e.meta.schemaVersion,
  data: maskSecrets(e.data),
  recorded_at: toMindsDbTimestamp(e.meta.recordedAt),
  actor: e.meta.actor ?? null,
  request_id: e.meta.requestId ?? null,
  interface: e.meta.via ?? null,
});

/** The log for auditors and replays, in global order, straight from the event store. */
export const auditRoutes = (api: Api, log: EventLog) =>
  api.add({
    method: 'get',
    path: '/api/events',
    tag: 'audit',
    summary: 'Read the event log in order (secrets masked)',
    query: eventsQuery,
    responses: {
      200: {
        description: 'A page of events; pass next_after as `after` for the next page',
        schema: z.object({ events: z.array(eventView), next_after: z.number().int() }),
      },
    },
    handle: async ({ query }) => {
      const events = await log.readPage({
        after: BigInt(query.after),
        limit: query.limit,
        stream: query.stream,
      });
      const last = events[events.length - 1];
      return {
        status: 200,
        body: { events: events.map(present), next_after: last ? last.meta.position : query.after },
      };
    },
  });
