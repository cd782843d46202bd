import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';
import { evolveProject, initialProjectState, type ProjectState } from './decider';

/**
 * A project's stream holds the project's own lifecycle and, as capabilities are added, everything
 * it contains: the project is the consistency boundary, so names stay unique inside it and a
 * deletion that cascades is one atomic append.
 */
export type ProjectAggregate = { readonly project: ProjectState };

export const projectAggregate: Aggregate<ProjectAggregate> = {
  initialState: () => ({ project: initialProjectState() }),
  evolve: (state, event) => ({ project: evolveProject(state.project, event) }),
};

export const projectStream = (name: string) => `project-${nameKey(name)}`;
