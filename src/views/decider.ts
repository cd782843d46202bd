import type { ViewCreated, ViewDeleted, ViewUpdated } from '../../events';
import type { ProjectAggregate, ProjectRef } from '../shared/projectState';
import { conflict, invalid } from '../shared/errors';
import { findByName } from '../shared/params';
import { decideInProject, deletionByName, type Now, type ProjectRule } from '../shared/decision';
import { requireView, viewDeleted, type View } from './state';

/** What view commands are decided on: the project and its views. */
type ViewDecisionState = Pick<ProjectAggregate, 'project' | 'views'>;

export type ViewCommand =
  | {
      type: 'CreateView';
      data: {
        name: string;
        query: string;
        /** CREATE OR REPLACE / PUT: an existing view of that name gets the new query. */
        replace: boolean;
        /** IF NOT EXISTS: an existing view of that name is kept, nothing recorded. */
        ifNotExists: boolean;
      };
      metadata: Now;
    }
  | { type: 'UpdateView'; data: { name: string; newName?: string; query?: string }; metadata: Now }
  | { type: 'DeleteView'; data: { name: string; ifExists: boolean }; metadata: Now };

type ViewEvent = ViewCreated | ViewUpdated | ViewDeleted;

const checkedQuery = (query: string) => {
  const q = query.trim();
  if (!q) throw invalid('A view needs a query (a SELECT)', 'Empty view');
  return q;
};

type Decide<T extends ViewCommand['type']> = ProjectRule<ViewCommand, T, ViewDecisionState, ViewEvent>;

/** CREATE OR REPLACE of an existing view: its query replaced, or nothing when it is the same. */
const replaced = (project: ProjectRef, existing: View, query: string, now: string): ViewUpdated[] => {
  if (existing.query === query) return [];
  return [
    {
      type: 'ViewUpdated',
      data: {
        projectId: Number(project.id),
        viewId: Number(existing.id),
        name: existing.name,
        query,
        updatedAt: now,
      },
    },
  ];
};

const createView: Decide<'CreateView'> = (command, state, { project, at }) => {
  const d = command.data;
  const query = checkedQuery(d.query);
  const existing = findByName(state.views.values(), d.name);
  if (existing) {
    if (d.ifNotExists) return [];
    if (!d.replace) throw conflict(`View already exists: ${d.name}`, 'View already exists');
    return replaced(project, existing, query, at);
  }
  return [
    {
      type: 'ViewCreated',
      data: { projectId: Number(project.id), project: project.name, name: d.name, query, createdAt: at },
    },
  ];
};

const updateView: Decide<'UpdateView'> = (command, state, { project, at }) => {
  const view = requireView(state.views, command.data.name);
  const name = command.data.newName ?? view.name;
  const other = findByName(state.views.values(), name);
  if (other && other.id !== view.id) throw conflict(`View already exists: ${name}`, 'View already exists');
  const query = command.data.query === undefined ? view.query : checkedQuery(command.data.query);
  if (name === view.name && query === view.query) return [];
  return [
    {
      type: 'ViewUpdated',
      data: { projectId: Number(project.id), viewId: Number(view.id), name, query, updatedAt: at },
    },
  ];
};

const deleteView: Decide<'DeleteView'> = (command, state, { project, at }) =>
  deletionByName(state.views, command.data, requireView, (view) => viewDeleted(view, project, at));

export const decideView = decideInProject<ViewCommand, ViewDecisionState, ViewEvent>({
  CreateView: createView,
  UpdateView: updateView,
  DeleteView: deleteView,
});
