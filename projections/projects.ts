import type { ProjectCreated, ProjectDeleted } from '../events';
import type { TableProjection } from '../src/projection/types';

/** `projects`: one row per live project. */
export const projectsProjection: TableProjection = {
  table: 'projects',
  key: 'id',
  columns: [
    { name: 'id', type: 'BIGINT' },
    { name: 'name', type: 'VARCHAR' },
    { name: 'created_at', type: 'TIMESTAMP' },
    { name: 'version', type: 'BIGINT' },
  ],
  handles: ['ProjectCreated', 'ProjectDeleted'],
  apply: (event, rows) => {
    if (event.type === 'ProjectCreated') {
      const d = (event as unknown as ProjectCreated).data;
      rows.put({
        id: event.meta.position,
        name: d.name,
        created_at: d.createdAt,
        version: event.meta.position,
      });
    } else {
      rows.delete(BigInt((event as unknown as ProjectDeleted).data.projectId));
    }
  },
};
