import type { MindledgerEvent, ProjectCreated, ProjectDeleted } from '../../events';
import { checkExpectedVersion, conflict, invalid, notFound } from '../shared/errors';
import type { ProjectAggregate } from './aggregate';
import { projectSlices } from './slices';
import { DEFAULT_PROJECT, type ProjectRef } from './state';

export type ProjectCommand =
  | { type: 'CreateProject'; data: { name: string }; metadata: { now: Date } }
  | { type: 'EnsureDefaultProject'; data: { name: string }; metadata: { now: Date } }
  | { type: 'DeleteProject'; data: { name: string; expectedVersion?: bigint }; metadata: { now: Date } };

type Cascade = (state: never, project: ProjectRef, at: string) => MindledgerEvent[];

/**
 * Deleting a project removes what it contains first, each removal an event, then the project:
 * every slice's cascade, in the reverse of the slices' order (what refers to others goes first).
 */
const removeProject = (aggregate: ProjectAggregate, project: ProjectRef, at: string): MindledgerEvent[] => [
  ...[...projectSlices]
    .reverse()
    .flatMap((slice) => (slice.cascade as Cascade)(aggregate[slice.key] as never, project, at)),
  { type: 'ProjectDeleted', data: { projectId: Number(project.id), name: project.name, deletedAt: at } },
];

const created = (name: string, now: Date): ProjectCreated => ({
  type: 'ProjectCreated',
  data: { name, createdAt: now.toISOString() },
});

export const decideProject = (
  command: ProjectCommand,
  aggregate: ProjectAggregate,
): (ProjectCreated | ProjectDeleted | MindledgerEvent)[] => {
  const state = aggregate.project;
  switch (command.type) {
    case 'CreateProject':
      if (state.status === 'live')
        throw conflict(`Project with name ${state.name} already exists`, 'Project already exists');
      return [created(command.data.name, command.metadata.now)];
    case 'EnsureDefaultProject':
      // Created once, on the very first start; a later start (or a second process) finds it there.
      if (state.status !== 'none') return [];
      return [created(command.data.name, command.metadata.now)];
    case 'DeleteProject':
      if (state.status !== 'live')
        throw notFound(`Project name ${command.data.name} does not exist`, 'Project not exists');
      if (state.name.toLowerCase() === DEFAULT_PROJECT)
        throw invalid(`The default project ${DEFAULT_PROJECT} cannot be deleted`, 'Cannot delete project');
      checkExpectedVersion('Project', state, command.data.expectedVersion);
      return removeProject(aggregate, state, command.metadata.now.toISOString());
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
