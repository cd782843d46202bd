import { agentCreated, at, projectCreated, skillCreated } from '../support/project';
import { projected } from '../support/projection';

describe('skills table', () => {
  it('holds each live skill with its params masked and the agents that use it', async () => {
    const table = await projected([
      projectCreated,
      skillCreated('s1', { database: 'files', api_key: 'sk-secret' }, 'sql'),
      skillCreated('s2'),
      agentCreated('a1', [{ skillId: 2, parameters: {} }]),
      agentCreated('a2', [
        { skillId: 2, parameters: {} },
        { skillId: 3, parameters: {} },
      ]),
    ]);
    expect(table('skills')).toEqual([
      expect.objectContaining({
        ID: 2n,
        NAME: 's1',
        PROJECT: 'proj',
        TYPE: 'sql',
        PARAMS: { database: 'files', api_key: '******' },
        AGENT_IDS: [4n, 5n],
        VERSION: 2n,
      }),
      expect.objectContaining({ ID: 3n, NAME: 's2', AGENT_IDS: [5n] }),
    ]);
  });

  it('follows agents relinking, detaching and deleting, and drops deleted skills', async () => {
    const table = await projected([
      projectCreated,
      skillCreated('s1'),
      skillCreated('s2'),
      agentCreated('a1', [{ skillId: 2, parameters: {} }]),
      {
        type: 'AgentUpdated',
        data: {
          ...agentCreated('a1').data,
          agentId: 4,
          skills: [{ skillId: 3, parameters: {} }],
          updatedAt: at,
        },
      },
      agentCreated('a2', [{ skillId: 3, parameters: {} }]),
      { type: 'AgentDeleted', data: { projectId: 1, agentId: 6, name: 'a2', deletedAt: at } },
      {
        type: 'SkillUpdated',
        data: {
          projectId: 1,
          project: 'proj',
          skillId: 2,
          name: 's1b',
          type: 'custom',
          params: {},
          updatedAt: at,
        },
      },
    ]);
    expect(table('skills').map((r) => [r.NAME, r.AGENT_IDS])).toEqual([
      ['s1b', []],
      ['s2', [4n]],
    ]);
    const afterDelete = await projected([
      projectCreated,
      skillCreated('s1'),
      agentCreated('a1', [{ skillId: 2, parameters: {} }]),
      { type: 'SkillDeleted', data: { projectId: 1, skillId: 2, name: 's1', deletedAt: at } },
      {
        type: 'SkillDetachedFromAgent',
        data: { projectId: 1, agentId: 3, skillId: 2, skillName: 's1', reason: 'deleted', detachedAt: at },
      },
    ]);
    expect(afterDelete('skills')).toEqual([]);
    expect(afterDelete('agents')).toEqual([
      expect.objectContaining({ NAME: 'a1', SKILLS: [], SKILL_IDS: [] }),
    ]);
  });
});
