import { agentCreated, at, projectCreated, skillCreated } from '../support/project';
import { projected } from '../support/projection';

describe('agents table', () => {
  it('names its skills (MindsDB SKILLS), keeps their ids and per-link parameters, masks secrets', async () => {
    const table = await projected([
      projectCreated,
      skillCreated('s1'),
      agentCreated('a1', [{ skillId: 2, parameters: { tables: ['t'], password: 'p' } }], {
        openai_api_key: 'sk-1',
      }),
    ]);
    expect(table('agents')).toEqual([
      expect.objectContaining({
        ID: 3n,
        NAME: 'a1',
        PROJECT: 'proj',
        MODEL_NAME: 'gpt-4o',
        PROVIDER: 'openai',
        SKILLS: ['s1'],
        SKILL_IDS: [2n],
        SKILLS_EXTRA_PARAMETERS: { s1: { tables: ['t'], password: '******' } },
        PARAMS: { openai_api_key: '******' },
      }),
    ]);
  });

  it('renames a skill in every agent that lists it, and removes deleted agents', async () => {
    const table = await projected([
      projectCreated,
      skillCreated('s1'),
      agentCreated('a1', [{ skillId: 2, parameters: {} }]),
      agentCreated('a2', [{ skillId: 2, parameters: {} }]),
      {
        type: 'SkillUpdated',
        data: {
          projectId: 1,
          project: 'proj',
          skillId: 2,
          name: 'renamed',
          type: 'custom',
          params: {},
          updatedAt: at,
        },
      },
      { type: 'AgentDeleted', data: { projectId: 1, agentId: 4, name: 'a2', deletedAt: at } },
    ]);
    expect(table('agents').map((r) => [r.NAME, r.SKILLS])).toEqual([['a1', ['renamed']]]);
  });
});
