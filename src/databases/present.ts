import { SYSTEM_DATABASES } from '../shared/names';
import { toMindsDbTimestamp } from '../shared/time';
import type { DatabaseRow } from './projection';
import type { DatabaseView } from './schemas';

/** Databases that always exist: MindsDB's system schema and the uploaded-files database. */
export const systemDatabaseViews: readonly DatabaseView[] = [
  {
    name: SYSTEM_DATABASES.informationSchema,
    type: 'system',
    id: null,
    engine: null,
    visible: true,
    deletable: false,
  },
  {
    name: SYSTEM_DATABASES.files,
    type: 'data',
    id: null,
    engine: 'files',
    visible: true,
    deletable: false,
    class_type: 'sql',
    permanent: true,
  },
];

/** A project as the database registry shows it. */
export const presentProjectDatabase = (
  project: { id: number; name: string },
  deletable: boolean,
): DatabaseView => ({
  name: project.name,
  type: 'project',
  id: project.id,
  engine: null,
  visible: true,
  deletable,
});

/** A registered integration (secrets were masked by the projection). */
export const presentIntegration = (row: DatabaseRow): DatabaseView & { version: bigint } => ({
  name: row.name,
  type: 'data',
  id: Number(row.id),
  engine: row.engine,
  visible: true,
  deletable: true,
  class_type: 'sql',
  connection_data: JSON.parse(row.connection_data) as Record<string, unknown>,
  permanent: false,
  date_last_update: toMindsDbTimestamp(row.updated_at),
  version: row.version,
});
