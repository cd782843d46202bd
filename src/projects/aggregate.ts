import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { projectSlices } from './slices';
import { evolveProject, initialProjectState, type ProjectState } from '../shared/projectState';

type Slice = (typeof projectSlices)[number];

/** The state of a project's stream: the project, and each slice's state under its key. */
export type ProjectAggregate = { readonly project: ProjectState } & {
  readonly [S in Slice as S['key']]: ReturnType<S['initial']>;
};

type Contents = Omit<ProjectAggregate, 'project'>;

// Each slice's state is opaque here: only the slice's own evolve and cascade look inside.
type AnySlice = {
  key: string;
  initial: () => unknown;
  evolve: (state: never, event: RecordedEvent) => unknown;
};
const slices = projectSlices as readonly AnySlice[];

const emptyContents = (): Contents => Object.fromEntries(slices.map((s) => [s.key, s.initial()])) as Contents;

const evolveContents = (contents: Contents, event: RecordedEvent): Contents =>
  Object.fromEntries(
    slices.map((s) => [s.key, s.evolve(contents[s.key as keyof Contents] as never, event)]),
  ) as Contents;

export const projectAggregate: Aggregate<ProjectAggregate> = {
  initialState: () => ({ project: initialProjectState(), ...emptyContents() }),
  evolve: (state, event) => {
    // A project that is deleted and created again starts empty.
    if (event.type === 'ProjectCreated')
      return { ...emptyContents(), project: evolveProject(state.project, event) };
    return { ...evolveContents(state, event), project: evolveProject(state.project, event) };
  },
};
