import type { TriggerCreated } from '../../events';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import {
  decideTrigger,
  decideTriggerFiring,
  type TriggerCommand,
  type TriggerFiringCommand,
} from '../../src/triggers/decider';
import { triggerFiringsAggregate } from '../../src/triggers/state';
import { deciderSpec } from '../support/decider';
import { at, now, projectCreated, projectSpec } from '../support/project';

const spec = projectSpec<TriggerCommand>(decideTrigger);
const owner = { user: null, role: null, project: null };
const create = (name = 'copy'): TriggerCommand => ({
  type: 'CreateTrigger',
  data: {
    name,
    database: 'pg',
    table: 'orders',
    columns: null,
    query: 'SELECT 1',
    key: 'a1b2c3d4e5f6',
    owner,
  },
  metadata: { now },
});
const created: TriggerCreated = {
  type: 'TriggerCreated',
  data: {
    projectId: 1,
    project: 'proj',
    name: 'copy',
    database: 'pg',
    table: 'orders',
    columns: null,
    query: 'SELECT 1',
    key: 'a1b2c3d4e5f6',
    owner,
    createdAt: at,
  },
};

describe('trigger decider (the project stream)', () => {
  it('creates a trigger; the same name again is a conflict', () => {
    spec.given([projectCreated]).when(create()).then([created]);
    spec
      .given([projectCreated, created])
      .when(create('COPY'))
      .thenThrows('Conflict', /Trigger already exists/);
  });

  it('drops a trigger, IF EXISTS keeps quiet, and the project cascade drops it first', () => {
    const deleted = {
      type: 'TriggerDeleted' as const,
      data: { projectId: 1, triggerId: 2, name: 'copy', deletedAt: at },
    };
    spec
      .given([projectCreated, created])
      .when({ type: 'DeleteTrigger', data: { name: 'copy', ifExists: false }, metadata: { now } })
      .then([deleted]);
    spec
      .given([projectCreated])
      .when({ type: 'DeleteTrigger', data: { name: 'copy', ifExists: false }, metadata: { now } })
      .thenThrows('NotFound', /Trigger with name copy/);
    spec
      .given([projectCreated])
      .when({ type: 'DeleteTrigger', data: { name: 'copy', ifExists: true }, metadata: { now } })
      .then([]);
    projectSpec<ProjectCommand>(decideProject)
      .given([projectCreated, created])
      .when({ type: 'DeleteProject', data: { name: 'proj' }, metadata: { now } })
      .then([deleted, { type: 'ProjectDeleted', data: { projectId: 1, name: 'proj', deletedAt: at } }]);
  });
});

describe('trigger firings (their own stream): rows are claimed once', () => {
  const firing = deciderSpec<ReturnType<typeof triggerFiringsAggregate.initialState>, TriggerFiringCommand>({
    ...triggerFiringsAggregate,
    decide: (command, state) => decideTriggerFiring(command, state, 9n),
  });
  const claim = (claimId: string, upTo: number): TriggerFiringCommand => ({
    type: 'ClaimFiring',
    data: { triggerId: 9n, projectId: 1, claimId, upTo, rows: 2, node: 'n1' },
    metadata: { now },
  });
  const fired = (claimId: string, upTo: number, n = 1) => ({
    type: 'TriggerFired' as const,
    data: { triggerId: 9, projectId: 1, firing: n, claimId, upTo, rows: 2, node: 'n1', firedAt: at },
  });

  it('claims rows past the last claimed; rows up to it are another firing’s (a conflict: that process lost)', () => {
    firing
      .given([])
      .when(claim('c1', 5))
      .then([fired('c1', 5)]);
    firing
      .given([fired('c1', 5)])
      .when(claim('c2', 9))
      .then([fired('c2', 9, 2)]);
    firing
      .given([fired('c1', 5)])
      .when(claim('c2', 5))
      .thenThrows('Conflict', /claimed already/);
  });

  it('only an open claim records its outcome, once', () => {
    const finish = (claimId: string): TriggerFiringCommand => ({
      type: 'FinishFiring',
      data: { claimId, statements: 1 },
      metadata: { now },
    });
    firing
      .given([fired('c1', 5)])
      .when(finish('c1'))
      .then([
        {
          type: 'TriggerFiringFinished',
          data: { triggerId: 9, claimId: 'c1', statements: 1, finishedAt: at },
        },
      ]);
    firing
      .given([fired('c1', 5)])
      .when(finish('other'))
      .thenThrows('Conflict', /not open/);
    firing
      .given([
        fired('c1', 5),
        {
          type: 'TriggerFiringFinished',
          data: { triggerId: 9, claimId: 'c1', statements: 1, finishedAt: at },
        },
      ])
      .when(finish('c1'))
      .thenThrows('Conflict', /not open/);
  });
});
