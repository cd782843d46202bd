import type { TableProjection } from '../src/projection/types';
import { columns } from '../src/projection/columns';
import { maskSecrets } from '../src/shared/secrets';

/** `events`: the log itself, secrets masked, for auditors who prefer SQL. Append-only. */
export const eventsProjection: TableProjection = {
  table: 'events',
  key: null,
  columns: columns(
    `global_position BIGINT, stream VARCHAR, stream_position BIGINT, event_id VARCHAR, type VARCHAR,
    schema_version INTEGER, data JSON, recorded_at TIMESTAMP`,
    // Who, by which request and interface (metadata: absent on events older than these columns).
    'actor VARCHAR, request_id VARCHAR, interface VARCHAR',
  ),
  handles: 'all',
  apply: (event, rows) =>
    rows.put({
      global_position: event.meta.position,
      stream: event.meta.stream,
      stream_position: event.meta.streamPosition,
      event_id: event.meta.eventId,
      type: event.type,
      schema_version: event.meta.schemaVersion,
      data: maskSecrets(event.data),
      recorded_at: event.meta.recordedAt || null,
      actor: event.meta.actor ?? null,
      request_id: event.meta.requestId ?? null,
      interface: event.meta.via ?? null,
    }),
};
