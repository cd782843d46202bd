import type { SkillCreated, SkillDeleted, SkillUpdated } from '../events';
import type { TableProjection } from '../src/projection/types';
import { maskSecrets } from '../src/shared/secrets';

/** `skills`: one row per live skill (MindsDB's information_schema.SKILLS columns first), secrets masked. */
export const skillsProjection: TableProjection = {
  table: 'skills',
  key: 'ID',
  columns: [
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'PROJECT', type: 'VARCHAR' },
    { name: 'TYPE', type: 'VARCHAR' },
    { name: 'PARAMS', type: 'JSON' },
    { name: 'ID', type: 'BIGINT' },
    { name: 'PROJECT_ID', type: 'BIGINT' },
    { name: 'CREATED_AT', type: 'TIMESTAMP' },
    { name: 'UPDATED_AT', type: 'TIMESTAMP' },
    { name: 'VERSION', type: 'BIGINT' },
  ],
  handles: ['SkillCreated', 'SkillUpdated', 'SkillDeleted'],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'SkillCreated': {
        const d = (event as unknown as SkillCreated).data;
        rows.put({
          ID: event.meta.position,
          NAME: d.name,
          PROJECT: d.project,
          PROJECT_ID: d.projectId,
          TYPE: d.type,
          PARAMS: maskSecrets(d.params),
          CREATED_AT: d.createdAt,
          UPDATED_AT: d.createdAt,
          VERSION: event.meta.position,
        });
        return;
      }
      case 'SkillUpdated': {
        const d = (event as unknown as SkillUpdated).data;
        const row = await rows.get(BigInt(d.skillId));
        if (!row) return;
        rows.put({
          ...row,
          NAME: d.name,
          TYPE: d.type,
          PARAMS: maskSecrets(d.params),
          UPDATED_AT: d.updatedAt,
          VERSION: event.meta.position,
        });
        return;
      }
      case 'SkillDeleted':
        rows.delete(BigInt((event as unknown as SkillDeleted).data.skillId));
        return;
    }
  },
};
