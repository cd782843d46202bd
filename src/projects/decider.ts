import type {
  AgentDeleted,
  AnyRecordedEvent,
  ChatbotDeleted,
  ModelDeleted,
  ProjectCreated,
  ProjectDeleted,
  SkillDeleted,
} from '../../events';
import type { ProjectAggregate } from './aggregate';
import { checkExpectedVersion, conflict, invalid, notFound } from '../shared/errors';

/** The project as its own stream knows it. Its id is the log position of its creation. */
export type ProjectState =
  | { status: 'none' }
  | { status: 'live'; id: bigint; name: string; createdAt: string; version: bigint }
  | { status: 'deleted'; name: string };

export const initialProjectState = (): ProjectState => ({ status: 'none' });

export const DEFAULT_PROJECT = 'mindsdb';

export type ProjectCommand =
  | { type: 'CreateProject'; data: { name: string }; metadata: { now: Date } }
  | { type: 'EnsureDefaultProject'; data: { name: string }; metadata: { now: Date } }
  | { type: 'DeleteProject'; data: { name: string; expectedVersion?: bigint }; metadata: { now: Date } };

export const evolveProject = (state: ProjectState, event: AnyRecordedEvent): ProjectState => {
  switch (event.type) {
    case 'ProjectCreated': {
      const data = (event as unknown as ProjectCreated).data;
      return {
        status: 'live',
        id: event.meta.position,
        name: data.name,
        createdAt: data.createdAt,
        version: event.meta.position,
      };
    }
    case 'ProjectDeleted':
      return { status: 'deleted', name: (event as unknown as ProjectDeleted).data.name };
    default:
      return state;
  }
};

/** The project, or a 404 when it does not exist (any more). */
export const requireLiveProject = (state: ProjectState) => {
  if (state.status !== 'live')
    throw notFound(
      `Project name ${state.status === 'deleted' ? state.name : ''} does not exist`.replace('  ', ' '),
      'Project not found',
    );
  return state;
};

type ProjectRemoval = ChatbotDeleted | AgentDeleted | SkillDeleted | ModelDeleted | ProjectDeleted;

/** Deleting a project removes what it contains first, each removal an event, then the project. */
const removeProject = (
  aggregate: ProjectAggregate,
  project: { id: bigint; name: string },
  at: string,
): ProjectRemoval[] => {
  const projectId = Number(project.id);
  return [
    ...[...aggregate.chatbots.values()].map((b): ChatbotDeleted => ({
      type: 'ChatbotDeleted',
      data: { projectId, chatbotId: Number(b.id), name: b.name, deletedAt: at },
    })),
    ...[...aggregate.agents.values()].map((a): AgentDeleted => ({
      type: 'AgentDeleted',
      data: { projectId, agentId: Number(a.id), name: a.name, deletedAt: at },
    })),
    ...[...aggregate.skills.values()].map((s): SkillDeleted => ({
      type: 'SkillDeleted',
      data: { projectId, skillId: Number(s.id), name: s.name, deletedAt: at },
    })),
    ...[...aggregate.models.values()].map((m): ModelDeleted => ({
      type: 'ModelDeleted',
      data: { projectId, project: project.name, name: m.name, deletedAt: at },
    })),
    { type: 'ProjectDeleted', data: { projectId, name: project.name, deletedAt: at } },
  ];
};

export const decideProject = (
  command: ProjectCommand,
  aggregate: ProjectAggregate,
): (ProjectCreated | ProjectRemoval)[] => {
  const state = aggregate.project;
  switch (command.type) {
    case 'CreateProject':
      if (state.status === 'live')
        throw conflict(`Project with name ${state.name} already exists`, 'Project already exists');
      return [
        {
          type: 'ProjectCreated',
          data: { name: command.data.name, createdAt: command.metadata.now.toISOString() },
        },
      ];
    case 'EnsureDefaultProject':
      // Created once, on the very first start; a later start (or a second process) finds it there.
      if (state.status !== 'none') return [];
      return [
        {
          type: 'ProjectCreated',
          data: { name: command.data.name, createdAt: command.metadata.now.toISOString() },
        },
      ];
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
