import type { SkillDetachedFromAgent } from '../../events';
import { decideSkill, type SkillCommand } from '../../src/skills/decider';
import { agentCreated, at, now, projectCreated, projectSpec, skillCreated } from '../support/project';

const spec = projectSpec<SkillCommand>(decideSkill);
const metadata = { now };

describe('skill decider', () => {
  it('creates a skill with free-text type', () =>
    spec
      .given([projectCreated])
      .when({
        type: 'CreateSkill',
        data: { name: 's1', type: 'Knowledge Base', params: { k1: 'v1' } },
        metadata,
      })
      .then([skillCreated('s1', { k1: 'v1' }, 'Knowledge Base')]));

  it('refuses a duplicate name, case-insensitively', () =>
    spec
      .given([projectCreated, skillCreated('Docs')])
      .when({ type: 'CreateSkill', data: { name: 'docs', type: 'x', params: {} }, metadata })
      .thenThrows('Conflict', /already exists/));

  it('validates the params of known types (sql names a database; text2sql is its alias)', () => {
    spec
      .given([projectCreated])
      .when({
        type: 'CreateSkill',
        data: { name: 's', type: 'text2sql', params: { tables: ['t'] } },
        metadata,
      })
      .thenThrows('Invalid', /params\.database: a sql skill names the database/);
    spec
      .given([projectCreated])
      .when({ type: 'CreateSkill', data: { name: 's', type: 'retrieval', params: {} }, metadata })
      .thenThrows('Invalid', /params\.source/);
    spec
      .given([projectCreated])
      .when({
        type: 'CreateSkill',
        data: { name: 's', type: 'sql', params: { database: 'db', tables: [5] } },
        metadata,
      })
      .thenThrows('Invalid', /params\.tables\.0/);
  });

  it('PUT merges params and removes keys sent as null; name and type are replaced', () =>
    spec
      .given([projectCreated, skillCreated('s1', { k1: 'v1', k2: 'v2' })])
      .when({
        type: 'PutSkill',
        data: { ref: 'S1', name: 's1_new', type: 'other', params: { k1: null, k2: 'v2.1', k3: 'v3' } },
        metadata,
      })
      .then([
        {
          type: 'SkillUpdated',
          data: {
            projectId: 1,
            project: 'proj',
            skillId: 2,
            name: 's1_new',
            type: 'other',
            params: { k2: 'v2.1', k3: 'v3' },
            updatedAt: at,
          },
        },
      ]));

  it('PUT keeps a stored secret sent back masked', () =>
    spec
      .given([projectCreated, skillCreated('s1', { api_key: 'sk-1', k: 1 })])
      .when({ type: 'PutSkill', data: { ref: 's1', params: { api_key: '******', k: 2 } }, metadata })
      .then([
        {
          type: 'SkillUpdated',
          data: {
            projectId: 1,
            project: 'proj',
            skillId: 2,
            name: 's1',
            type: 'custom',
            params: { api_key: 'sk-1', k: 2 },
            updatedAt: at,
          },
        },
      ]));

  it('PUT creates a missing skill under the URL name', () =>
    spec
      .given([projectCreated])
      .when({
        type: 'PutSkill',
        data: { ref: 'from_url', name: 'from_body', type: 't', params: { a: 1 } },
        metadata,
      })
      .then([skillCreated('from_url', { a: 1 }, 't')]));

  it('deleting a skill detaches it from each agent using it, one event each', () =>
    spec
      .given([
        projectCreated,
        skillCreated('s1'),
        agentCreated('a1', [{ skillId: 2, parameters: {} }]),
        agentCreated('a2', [{ skillId: 2, parameters: { tables: ['t'] } }]),
        agentCreated('a3'),
      ])
      .when({ type: 'DeleteSkill', data: { ref: 's1' }, metadata })
      .then([
        { type: 'SkillDeleted', data: { projectId: 1, skillId: 2, name: 's1', deletedAt: at } },
        ...[3, 4].map((agentId): SkillDetachedFromAgent => ({
          type: 'SkillDetachedFromAgent',
          data: {
            projectId: 1,
            agentId,
            skillId: 2,
            skillName: 's1',
            reason: "skill 's1' was deleted",
            detachedAt: at,
          },
        })),
      ]));

  it('checks If-Match and existence', () => {
    spec
      .given([projectCreated, skillCreated('s1')])
      .when({ type: 'DeleteSkill', data: { ref: 's1', expectedVersion: 1n }, metadata })
      .thenThrows('PreconditionFailed', /version 2, not 1/);
    spec
      .given([projectCreated])
      .when({ type: 'DeleteSkill', data: { ref: 'nope' }, metadata })
      .thenThrows('NotFound');
  });
});
