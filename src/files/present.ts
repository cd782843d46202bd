import { toMindsDbTimestamp } from '../shared/time';
import type { FileRow } from './projection';

/** An uploaded file as `GET /api/files` lists it. */
export const presentFile = (r: FileRow) => {
  const columns = JSON.parse(r.COLUMNS) as { name: string; type: string }[];
  return {
    name: r.NAME,
    row_count: Number(r.ROW_COUNT),
    columns: columns.map((c) => c.name),
    column_types: Object.fromEntries(columns.map((c) => [c.name, c.type])),
    format: r.FORMAT,
    size: Number(r.SIZE),
    original_name: r.ORIGINAL_NAME,
    uploaded_at: toMindsDbTimestamp(r.UPLOADED_AT),
  };
};
