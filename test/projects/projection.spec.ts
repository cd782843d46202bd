import { projectCreated } from '../support/project';
import { projected } from '../support/projection';

describe('projects table', () => {
  it('holds one row per live project, its id the position of its creation', async () => {
    const table = await projected([
      projectCreated,
      { type: 'ProjectCreated', data: { name: 'other', createdAt: '2026-03-05T00:00:00.000Z' } },
      {
        type: 'ProjectDeleted',
        data: { projectId: 2, name: 'other', deletedAt: '2026-03-06T00:00:00.000Z' },
      },
    ]);
    expect(table('projects')).toEqual([
      { id: 1n, name: 'proj', created_at: new Date(projectCreated.data.createdAt), version: 1n },
    ]);
  });
});
