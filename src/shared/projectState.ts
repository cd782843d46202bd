import type { MindledgerEvent, RecordedEvent } from '../../events';
import { projectNotFound } from './errors';
import { nameKey } from './names';

/** The project as its own stream knows it. Its id is the log position of its creation. */
export type ProjectState =
  | { status: 'none' }
  | { status: 'live'; id: bigint; name: string; createdAt: string; version: bigint }
  | { status: 'deleted'; name: string };

export const initialProjectState = (): ProjectState => ({ status: 'none' });

export const DEFAULT_PROJECT = 'mindsdb';

/**
 * A project's stream holds the project's own lifecycle and everything it contains: the project is
 * the consistency boundary, so names stay unique inside it, references between its resources are
 * checked against one consistent state, and a cascading change is one atomic append.
 */
export const projectStream = (name: string) => `project-${nameKey(name)}`;

export const evolveProject = (state: ProjectState, event: RecordedEvent): ProjectState => {
  switch (event.type) {
    case 'ProjectCreated':
      return {
        status: 'live',
        id: event.meta.position,
        name: event.data.name,
        createdAt: event.data.createdAt,
        version: event.meta.position,
      };
    case 'ProjectDeleted':
      return { status: 'deleted', name: event.data.name };
    default:
      return state;
  }
};

/** The project, or a 404 when it does not exist (any more). */
export const requireLiveProject = (state: ProjectState) => {
  if (state.status !== 'live') throw projectNotFound(state.status === 'deleted' ? state.name : '');
  return state;
};

/** The project a cascade removes things from. */
export type ProjectRef = { readonly id: bigint; readonly name: string };

/**
 * One kind of resource that lives in a project's stream (skills, agents, …). The project aggregate,
 * the project's delete cascade and the order of both are assembled from the list of these in
 * `src/projects/slices.ts`; `cascade` is required, so a slice that forgets what to remove when its
 * project goes does not compile (it would leave orphan rows in the projections).
 */
type ProjectSlice<Key extends string, State> = {
  readonly key: Key;
  readonly initial: () => State;
  readonly evolve: (state: State, event: RecordedEvent) => State;
  /** The events removing everything this slice holds, recorded before the project's own deletion. */
  readonly cascade: (state: State, project: ProjectRef, at: string) => MindledgerEvent[];
};

export const defineProjectSlice = <Key extends string, State>(slice: ProjectSlice<Key, State>) => slice;

/**
 * What a project's stream holds besides the project, one key per slice: declared empty here and
 * filled from the list of slices where the list is (src/projects/aggregate.ts, `declare module`),
 * so what reads a project's state needs only this module. Importing the list, which imports every
 * slice, tied every slice's folder into one cycle with src/projects.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in src/projects/aggregate.ts
export interface ProjectContents {}

/** The state of a project's stream: the project, and each slice's state under its key. */
export type ProjectAggregate = { readonly project: ProjectState } & Readonly<ProjectContents>;
