import { decideAgent, type AgentCommand } from '../../src/agents/decider';
import {
  agentCreated,
  at,
  chatbotCreated,
  now,
  projectCreated,
  projectSpec,
  skillCreated,
} from '../support/project';

const spec = projectSpec<AgentCommand>(decideAgent);
const metadata = { now };
const base = { modelName: 'gpt-4o', provider: 'openai', params: {}, skills: [] };

describe('agent decider', () => {
  it('creates an agent linked to existing skills, with per-link parameters', () =>
    spec
      .given([projectCreated, skillCreated('s1')])
      .when({
        type: 'CreateAgent',
        data: { ...base, name: 'a1', skills: [{ ref: 'S1', parameters: { tables: ['t'] } }] },
        metadata,
      })
      .then([agentCreated('a1', [{ skillId: 2, parameters: { tables: ['t'] } }])]));

  it('refuses unknown skills (404), duplicates (409), deprecated params (400) and mindsdb models that do not exist (404)', () => {
    const given = spec.given([projectCreated, agentCreated('a1')]);
    given
      .when({
        type: 'CreateAgent',
        data: { ...base, name: 'a2', skills: [{ ref: 'ghost', parameters: {} }] },
        metadata,
      })
      .thenThrows('NotFound', /"ghost"/);
    given.when({ type: 'CreateAgent', data: { ...base, name: 'A1' }, metadata }).thenThrows('Conflict');
    given
      .when({
        type: 'CreateAgent',
        data: { ...base, name: 'a3', params: { include_tables: ['t'] } },
        metadata,
      })
      .thenThrows('Invalid', /include_tables/);
    given
      .when({
        type: 'CreateAgent',
        data: { ...base, name: 'a4', provider: 'mindsdb', modelName: 'm1' },
        metadata,
      })
      .thenThrows('NotFound', /Model with name m1/);
  });

  it('updates: params merged with null removal, skills added and removed', () =>
    spec
      .given([
        projectCreated,
        skillCreated('s1'),
        skillCreated('s2'),
        agentCreated('a1', [{ skillId: 2, parameters: {} }], { k1: 'v1', k2: 'v2' }),
      ])
      .when({
        type: 'UpdateAgent',
        data: {
          ref: 'a1',
          params: { k1: 'v1.1', k2: null, k3: 'v3' },
          skillsToAdd: [{ ref: 's2', parameters: {} }],
          skillsToRemove: ['s1'],
        },
        metadata,
      })
      .then([
        {
          type: 'AgentUpdated',
          data: {
            projectId: 1,
            project: 'proj',
            agentId: 4,
            name: 'a1',
            modelName: 'gpt-4o',
            provider: 'openai',
            params: { k1: 'v1.1', k3: 'v3' },
            skills: [{ skillId: 3, parameters: {} }],
            updatedAt: at,
          },
        },
      ]));

  it('sets retrieval mode when a retrieval skill is added to an agent without a mode', () =>
    spec
      .given([projectCreated, skillCreated('kb', { source: 'kb1' }, 'retrieval'), agentCreated('a1')])
      .when({
        type: 'UpdateAgent',
        data: { ref: 'a1', skillsToAdd: [{ ref: 'kb', parameters: {} }] },
        metadata,
      })
      .then([
        {
          type: 'AgentUpdated',
          data: expect.objectContaining({
            params: { mode: 'retrieval' },
            skills: [{ skillId: 2, parameters: {} }],
          }),
        },
      ]));

  it('never creates through PUT, and refuses skills with skills_to_add', () => {
    spec
      .given([projectCreated])
      .when({ type: 'UpdateAgent', data: { ref: 'ghost' }, metadata })
      .thenThrows('Invalid', /PUT method is not allowed/);
    spec
      .given([projectCreated, skillCreated('s1'), agentCreated('a1')])
      .when({
        type: 'UpdateAgent',
        data: {
          ref: 'a1',
          skills: [{ ref: 's1', parameters: {} }],
          skillsToAdd: [{ ref: 's1', parameters: {} }],
        },
        metadata,
      })
      .thenThrows('Invalid', /cannot be combined/);
  });

  it('refuses a rename onto another agent', () =>
    spec
      .given([projectCreated, agentCreated('a1'), agentCreated('a2')])
      .when({ type: 'UpdateAgent', data: { ref: 'a1', name: 'A2' }, metadata })
      .thenThrows('Conflict'));

  it('deleting an agent stops each chatbot using it, one event each', () =>
    spec
      .given([projectCreated, agentCreated('a1'), chatbotCreated('bot1', 2), chatbotCreated('bot2', null)])
      .when({ type: 'DeleteAgent', data: { ref: 'a1' }, metadata })
      .then([
        { type: 'AgentDeleted', data: { projectId: 1, agentId: 2, name: 'a1', deletedAt: at } },
        {
          type: 'ChatbotStoppedAgentDeleted',
          data: {
            projectId: 1,
            chatbotId: 3,
            agentId: 2,
            agentName: 'a1',
            lastError: "agent 'a1' was deleted",
            stoppedAt: at,
          },
        },
      ]));
});
