import type { ProjectCreated } from '../../events';
import { projectAggregate } from '../../src/projects/aggregate';
import type { ProjectAggregate } from '../../src/shared/projectState';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import { deciderSpec } from '../support/decider';

const now = new Date('2026-02-03T04:05:06.789Z');
const spec = deciderSpec<ProjectAggregate, ProjectCommand>({ ...projectAggregate, decide: decideProject });
const created = (name: string): ProjectCreated => ({
  type: 'ProjectCreated',
  data: { name, createdAt: now.toISOString() },
});

describe('project decider', () => {
  it('creates a project that does not exist', () =>
    spec
      .given([])
      .when({ type: 'CreateProject', data: { name: 'Sales' }, metadata: { now } })
      .then([created('Sales')]));

  it('refuses to create a project twice', () =>
    spec
      .given([created('Sales')])
      .when({ type: 'CreateProject', data: { name: 'sales' }, metadata: { now } })
      .thenThrows('Conflict', /already exists/));

  it('recreates a project after it was deleted', () =>
    spec
      .given([
        created('Sales'),
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'Sales', deletedAt: now.toISOString() } },
      ])
      .when({ type: 'CreateProject', data: { name: 'sales' }, metadata: { now } })
      .then([created('sales')]));

  it('deletes a live project naming its id (the position of its creation)', () =>
    spec
      .given([created('Sales')])
      .when({ type: 'DeleteProject', data: { name: 'SALES' }, metadata: { now } })
      .then([
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'Sales', deletedAt: now.toISOString() } },
      ]));

  it('never deletes the default project', () =>
    spec
      .given([created('mindsdb')])
      .when({ type: 'DeleteProject', data: { name: 'mindsdb' }, metadata: { now } })
      .thenThrows('Invalid', /cannot be deleted/));

  it('answers 404 for a missing project and 412 for a stale version', () => {
    spec
      .given([])
      .when({ type: 'DeleteProject', data: { name: 'x' }, metadata: { now } })
      .thenThrows('NotFound', /does not exist/);
    spec
      .given([created('x')])
      .when({ type: 'DeleteProject', data: { name: 'x', expectedVersion: 7n }, metadata: { now } })
      .thenThrows('PreconditionFailed', /version 1, not 7/);
  });

  it('creates the default project only on the very first start', () => {
    spec
      .given([])
      .when({ type: 'EnsureDefaultProject', data: { name: 'mindsdb' }, metadata: { now } })
      .then([created('mindsdb')]);
    spec
      .given([created('mindsdb')])
      .when({ type: 'EnsureDefaultProject', data: { name: 'mindsdb' }, metadata: { now } })
      .then([]);
  });
});
