import { projectCreated, skillCreated } from '../support/project';
import { projected } from '../support/projection';

describe('events table (the log mirrored for SQL auditors)', () => {
  it('holds every event in order, secrets masked', async () => {
    const table = await projected([projectCreated, skillCreated('s', { password: 'pw', host: 'h' })]);
    expect(table('events').map((r) => [r.global_position, r.type, r.data])).toEqual([
      [1n, 'ProjectCreated', projectCreated.data],
      [2n, 'SkillCreated', expect.objectContaining({ params: { password: '******', host: 'h' } })],
    ]);
  });
});
