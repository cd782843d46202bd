import type { ViewCreated, ViewDeleted, ViewUpdated } from '../../events';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import { decideView, type ViewCommand } from '../../src/views/decider';
import { at, now, projectCreated, projectSpec } from '../support/project';

const spec = projectSpec<ViewCommand>(decideView);

const create = (
  name: string,
  query: string,
  flags: { replace?: boolean; ifNotExists?: boolean } = {},
): ViewCommand => ({
  type: 'CreateView',
  data: { name, query, replace: flags.replace ?? false, ifNotExists: flags.ifNotExists ?? false },
  metadata: { now },
});
const viewCreated = (name: string, query: string): ViewCreated => ({
  type: 'ViewCreated',
  data: { projectId: 1, project: 'proj', name, query, createdAt: at },
});
// The view created right after the project is at position 2.
const viewUpdated = (name: string, query: string, viewId = 2): ViewUpdated => ({
  type: 'ViewUpdated',
  data: { projectId: 1, viewId, name, query, updatedAt: at },
});
const viewDeleted = (name: string, viewId = 2): ViewDeleted => ({
  type: 'ViewDeleted',
  data: { projectId: 1, viewId, name, deletedAt: at },
});

describe('view decider (the project stream)', () => {
  it('creates a view with its query as written, trimmed', () =>
    spec
      .given([projectCreated])
      .when(create('v', '  SELECT 1  '))
      .then([viewCreated('v', 'SELECT 1')]));

  it('refuses a second view of the same name, in any case (409)', () =>
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when(create('V', 'SELECT 2'))
      .thenThrows('Conflict', /View already exists: V/));

  it('keeps the existing view with IF NOT EXISTS, recording nothing', () =>
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when(create('v', 'SELECT 2', { ifNotExists: true }))
      .then([]));

  it('replaces the query with OR REPLACE, and records nothing when it is the same', () => {
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when(create('v', 'SELECT 2', { replace: true }))
      .then([viewUpdated('v', 'SELECT 2')]);
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when(create('v', 'SELECT 1', { replace: true }))
      .then([]);
  });

  it('refuses an empty query (400)', () =>
    spec
      .given([projectCreated])
      .when(create('v', '   '))
      .thenThrows('Invalid', /needs a query/));

  it('renames a view and changes its query; a name another view has is refused', () => {
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when({ type: 'UpdateView', data: { name: 'v', newName: 'w', query: 'SELECT 3' }, metadata: { now } })
      .then([viewUpdated('w', 'SELECT 3')]);
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1'), viewCreated('w', 'SELECT 2')])
      .when({ type: 'UpdateView', data: { name: 'v', newName: 'W' }, metadata: { now } })
      .thenThrows('Conflict', /View already exists: W/);
  });

  it('deletes a view; an unknown one is a 404 unless IF EXISTS', () => {
    spec
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when({ type: 'DeleteView', data: { name: 'V', ifExists: false }, metadata: { now } })
      .then([viewDeleted('v')]);
    spec
      .given([projectCreated])
      .when({ type: 'DeleteView', data: { name: 'v', ifExists: false }, metadata: { now } })
      .thenThrows('NotFound', /View with name v does not exist/);
    spec
      .given([projectCreated])
      .when({ type: 'DeleteView', data: { name: 'v', ifExists: true }, metadata: { now } })
      .then([]);
  });

  it('refuses views in a deleted project', () =>
    spec
      .given([
        projectCreated,
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'proj', deletedAt: at } },
      ])
      .when(create('v', 'SELECT 1'))
      .thenThrows('NotFound', /Project name proj does not exist/));

  it('deleting the project deletes its views first', () =>
    projectSpec<ProjectCommand>(decideProject)
      .given([projectCreated, viewCreated('v', 'SELECT 1')])
      .when({ type: 'DeleteProject', data: { name: 'proj' }, metadata: { now } })
      .then([
        viewDeleted('v'),
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'proj', deletedAt: at } },
      ]));
});
