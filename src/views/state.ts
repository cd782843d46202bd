import type { RecordedEvent, ViewDeleted } from '../../events';
import { defineProjectSlice } from '../shared/projectState';
import { notFound } from '../shared/errors';
import { findByName } from '../shared/params';

/** A view as its project's stream knows it. Its id is the log position of its creation. */
export type View = {
  readonly id: bigint;
  readonly name: string;
  readonly query: string;
};
export type ViewsState = ReadonlyMap<bigint, View>;

const evolveViews = (views: ViewsState, event: RecordedEvent): ViewsState => {
  switch (event.type) {
    case 'ViewCreated': {
      const id = event.meta.position;
      return new Map(views).set(id, { id, name: event.data.name, query: event.data.query });
    }
    case 'ViewUpdated': {
      const id = BigInt(event.data.viewId);
      const current = views.get(id);
      if (!current) return views;
      return new Map(views).set(id, { ...current, name: event.data.name, query: event.data.query });
    }
    case 'ViewDeleted': {
      const next = new Map(views);
      next.delete(BigInt(event.data.viewId));
      return next;
    }
    default:
      return views;
  }
};

/** A view by name (case-insensitive, as MindsDB's names), or a 404 naming it. */
export const requireView = (views: ViewsState, name: string): View => {
  const view = findByName(views.values(), name);
  if (!view) throw notFound(`View with name ${name} does not exist`, 'View not found');
  return view;
};

export const viewsSlice = defineProjectSlice({
  key: 'views',
  initial: (): ViewsState => new Map(),
  evolve: evolveViews,
  cascade: (views, project, at) =>
    [...views.values()].map((v): ViewDeleted => ({
      type: 'ViewDeleted',
      data: { projectId: Number(project.id), viewId: Number(v.id), name: v.name, deletedAt: at },
    })),
});
