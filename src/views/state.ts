import type { RecordedEvent, ViewDeleted } from '../../events';
import {
  changeResource,
  defineResourcesSlice,
  requireNamed,
  withoutResource,
  withResource,
} from '../shared/resourceState';
import type { ProjectRef } from '../shared/projectState';

/** A view as its project's stream knows it. Its id is the log position of its creation. */
export type View = {
  readonly id: bigint;
  readonly name: string;
  readonly query: string;
};
export type ViewsState = ReadonlyMap<bigint, View>;

const evolveViews = (views: ViewsState, event: RecordedEvent): ViewsState => {
  switch (event.type) {
    case 'ViewCreated':
      return withResource(views, { id: event.meta.position, name: event.data.name, query: event.data.query });
    case 'ViewUpdated': {
      const { name, query } = event.data;
      return changeResource(views, event.data.viewId, (current) => ({ ...current, name, query }));
    }
    case 'ViewDeleted':
      return withoutResource(views, event.data.viewId);
    default:
      return views;
  }
};

/** A view by name (case-insensitive, as MindsDB's names), or a 404 naming it. */
export const requireView = (views: ViewsState, name: string): View => requireNamed(views, name, 'View');

/** The event deleting `view`: DROP VIEW's and its project's deletion's. */
export const viewDeleted = (view: View, project: ProjectRef, at: string): ViewDeleted => ({
  type: 'ViewDeleted',
  data: { projectId: Number(project.id), viewId: Number(view.id), name: view.name, deletedAt: at },
});

export const viewsSlice = defineResourcesSlice('views', evolveViews, viewDeleted);
