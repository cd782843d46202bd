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
type Contents = { readonly [S in Slice as S['key']]: ReturnType<S['initial']> };

/**
 * The list and the slices' own declarations of ProjectContents name the same keys and states: a
 * slice in the list that does not declare its key, or one declared but left out, does not compile.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const listed: Same<Contents, Readonly<ProjectContents>> = true;
void listed;

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
