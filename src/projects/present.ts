import { toMindsDbTimestamp } from '../shared/time';
import type { ProjectRow } from './projection';
import type { ProjectView } from './schemas';
import type { ProjectState } from '../shared/projectState';
import type { ProjectEntry } from '../shared/projectDirectory';

/** A project as answered, with its version: what every resource's service sees (ProjectEntry). */
export type PresentedProject = ProjectView & ProjectEntry;

export const presentProject = (row: ProjectRow): PresentedProject => ({
  id: Number(row.id),
  name: row.name,
  created_at: toMindsDbTimestamp(row.created_at),
  version: row.version,
});

/** The answer to a write, from the state the command produced (the projection has it too by now). */
export const presentProjectState = (state: ProjectState): PresentedProject => {
  if (state.status !== 'live') throw new Error('a created project must be live');
  return {
    id: Number(state.id),
    name: state.name,
    created_at: toMindsDbTimestamp(state.createdAt),
    version: state.version,
  };
};
