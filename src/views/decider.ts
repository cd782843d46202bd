import type { ViewCreated, ViewDeleted, ViewUpdated } from '../../events';
import { requireLiveProject, type ProjectRef, type ProjectState } from '../shared/projectState';
import { conflict, invalid } from '../shared/errors';
import { findByName } from '../shared/params';
import { decideByType, type Now } from '../shared/decision';
import { requireView, type View, type ViewsState } from './state';

/** What view commands are decided on: the project and its views. */
type ViewDecisionState = { readonly project: ProjectState; readonly views: ViewsState };

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

type Command<T extends ViewCommand['type']> = Extract<ViewCommand, { type: T }>;

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

const createView = (
  command: Command<'CreateView'>,
  state: ViewDecisionState,
): (ViewCreated | ViewUpdated)[] => {
  const now = command.metadata.now.toISOString();
  const project = requireLiveProject(state.project);
  const d = command.data;
  const query = checkedQuery(d.query);
  const existing = findByName(state.views.values(), d.name);
  if (existing) {
    if (d.ifNotExists) return [];
    if (!d.replace) throw conflict(`View already exists: ${d.name}`, 'View already exists');
    return replaced(project, existing, query, now);
  }
  return [
    {
      type: 'ViewCreated',
      data: { projectId: Number(project.id), project: project.name, name: d.name, query, createdAt: now },
    },
  ];
};

const updateView = (command: Command<'UpdateView'>, state: ViewDecisionState): ViewUpdated[] => {
  const now = command.metadata.now.toISOString();
  const project = requireLiveProject(state.project);
  const view = requireView(state.views, command.data.name);
  const name = command.data.newName ?? view.name;
  const other = findByName(state.views.values(), name);
  if (other && other.id !== view.id) throw conflict(`View already exists: ${name}`, 'View already exists');
  const query = command.data.query === undefined ? view.query : checkedQuery(command.data.query);
  if (name === view.name && query === view.query) return [];
  return [
    {
      type: 'ViewUpdated',
      data: { projectId: Number(project.id), viewId: Number(view.id), name, query, updatedAt: now },
    },
  ];
};

const deleteView = (command: Command<'DeleteView'>, state: ViewDecisionState): ViewDeleted[] => {
  const now = command.metadata.now.toISOString();
  const project = requireLiveProject(state.project);
  if (command.data.ifExists && !findByName(state.views.values(), command.data.name)) return [];
  const view = requireView(state.views, command.data.name);
  return [
    {
      type: 'ViewDeleted',
      data: { projectId: Number(project.id), viewId: Number(view.id), name: view.name, deletedAt: now },
    },
  ];
};

export const decideView = decideByType<ViewCommand, ViewDecisionState, ViewEvent>({
  CreateView: createView,
  UpdateView: updateView,
  DeleteView: deleteView,
});
