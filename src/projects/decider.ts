import type { MindledgerEvent, ProjectCreated } from '../../events';
import { checkExpectedVersion, conflict, invalid, notFound } from '../shared/errors';
import type { ProjectAggregate } from '../shared/projectState';
import { projectSlices } from './slices';
import { decideByType, type Now } from '../shared/decision';
import { DEFAULT_PROJECT, type ProjectRef } from '../shared/projectState';

export type ProjectCommand =
  | { type: 'CreateProject'; data: { name: string }; metadata: Now }
  | { type: 'EnsureDefaultProject'; data: { name: string }; metadata: Now }
  | { type: 'DeleteProject'; data: { name: string; expectedVersion?: bigint }; metadata: Now };

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

type Command<T extends ProjectCommand['type']> = Extract<ProjectCommand, { type: T }>;

const createProject = (command: Command<'CreateProject'>, aggregate: ProjectAggregate): ProjectCreated[] => {
  const state = aggregate.project;
  if (state.status === 'live')
    throw conflict(`Project with name ${state.name} already exists`, 'Project already exists');
  return [created(command.data.name, command.metadata.now)];
};

/** Created once, on the very first start; a later start (or a second process) finds it there. */
const ensureDefaultProject = (
  command: Command<'EnsureDefaultProject'>,
  aggregate: ProjectAggregate,
): ProjectCreated[] => {
  if (aggregate.project.status !== 'none') return [];
  return [created(command.data.name, command.metadata.now)];
};

const deleteProject = (command: Command<'DeleteProject'>, aggregate: ProjectAggregate): MindledgerEvent[] => {
  const state = aggregate.project;
  if (state.status !== 'live')
    throw notFound(`Project name ${command.data.name} does not exist`, 'Project not exists');
  if (state.name.toLowerCase() === DEFAULT_PROJECT)
    throw invalid(`The default project ${DEFAULT_PROJECT} cannot be deleted`, 'Cannot delete project');
  checkExpectedVersion('Project', state, command.data.expectedVersion);
  return removeProject(aggregate, state, command.metadata.now.toISOString());
};

export const decideProject = decideByType<ProjectCommand, ProjectAggregate, MindledgerEvent>({
  CreateProject: createProject,
  EnsureDefaultProject: ensureDefaultProject,
  DeleteProject: deleteProject,
});
