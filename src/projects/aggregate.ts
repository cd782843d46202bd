import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { projectSlices } from './slices';
import {
  evolveProject,
  initialProjectState,
  type ProjectAggregate,
  type ProjectContents,
} from '../shared/projectState';

type Slice = (typeof projectSlices)[number];

/** What the list of slices holds, key by key. */
type Listed = { readonly [S in Slice as S['key']]: ReturnType<S['initial']> };

/**
 * ProjectContents (src/shared/projectState.ts) is what the list holds: declared here, where the
 * list is, so that what reads a project's state needs only src/shared, and a slice added to the
 * list is in the aggregate's type with nothing else to write.
 */
declare module '../shared/projectState' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- its members are the list's
  interface ProjectContents extends Listed {}
}

// Each slice's state is opaque here: only the slice's own evolve and cascade look inside.
type AnySlice = {
  key: string;
  initial: () => unknown;
  evolve: (state: never, event: RecordedEvent) => unknown;
};
const slices = projectSlices as readonly AnySlice[];

const emptyContents = (): ProjectContents =>
  Object.fromEntries(slices.map((s) => [s.key, s.initial()])) as ProjectContents;

const evolveContents = (contents: ProjectContents, event: RecordedEvent): ProjectContents =>
  Object.fromEntries(
    slices.map((s) => [s.key, s.evolve(contents[s.key as keyof ProjectContents] as never, event)]),
  ) as ProjectContents;

export const projectAggregate: Aggregate<ProjectAggregate> = {
  initialState: () => ({ project: initialProjectState(), ...emptyContents() }),
  evolve: (state, event) => {
    // A project that is deleted and created again starts empty.
    if (event.type === 'ProjectCreated')
      return { ...emptyContents(), project: evolveProject(state.project, event) };
    return { ...evolveContents(state, event), project: evolveProject(state.project, event) };
  },
};
