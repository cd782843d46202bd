import type { TableProjection } from '../src/projection/types';
import { maskSecrets } from '../src/shared/secrets';

/** `events`: the log itself, secrets masked, for auditors who prefer SQL. Append-only. */
export const eventsProjection: TableProjection = {
  table: 'events',
  key: null,
  columns: [
    { name: 'global_position', type: 'BIGINT' },
    { name: 'stream', type: 'VARCHAR' },
    { name: 'stream_position', type: 'BIGINT' },
    { name: 'event_id', type: 'VARCHAR' },
    { name: 'type', type: 'VARCHAR' },
    { name: 'schema_version', type: 'INTEGER' },
    { name: 'data', type: 'JSON' },
    { name: 'recorded_at', type: 'TIMESTAMP' },
    // Who, by which request and interface (metadata: absent on events older than these columns).
    { name: 'actor', type: 'VARCHAR' },
    { name: 'request_id', type: 'VARCHAR' },
    { name: 'interface', type: 'VARCHAR' },
  ],
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
