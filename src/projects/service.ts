import type { AppContext } from '../context';
import { projectCommand } from '../projectCommand';
import { conflict, invalid } from '../shared/errors';
import { isSystemDatabaseName } from '../shared/names';
import type { ProjectAggregate } from '../shared/projectState';
import type { Unstamped } from '../shared/params';
import { decideProject, type ProjectCommand } from './decider';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { presentProjectState } from './present';
import { DEFAULT_PROJECT } from '../shared/projectState';

/** What projects need of the rest. */
type ProjectPorts = {
  /** Whether an integration (a registered external database) holds a name: projects and integrations share one namespace. */
  isIntegration(name: string): Promise<boolean>;
  /**
   * Once a project's deletion is in the log, given its state as the deletion was decided on: what
   * to undo outside the log (the objects its triggers installed in their source databases; the
   * cascade records only their deletion). Read from the log, never the read model, so a delete
   * answered ahead of the read model waits for nothing.
   */
  removed(before: ProjectAggregate): Promise<void>;
};

/** Projects: reads through the directory, writes through the project's own stream. */
export const projectsService = (ctx: AppContext, directory: ProjectDirectory, ports: ProjectPorts) => ({
  ...directory,

  create: async (name: string) => {
    if (isSystemDatabaseName(name))
      throw conflict(`Database with name ${name} already exists (it is a system database)`, 'Name conflict');
    if (await ports.isIntegration(name))
      throw conflict(`Database with name ${name} already exists.`, 'Name conflict');
    // The answer is made from the command's own state: this process's reads wait for it instead.
    const outcome = await projectCommand<Unstamped<ProjectCommand>>(ctx, {
      project: name,
      projects: directory,
      asGiven: true,
      command: { type: 'CreateProject', data: { name } },
      decide: decideProject,
      answer: 'ahead',
    });
    return presentProjectState(outcome.state.project);
  },

  remove: async (name: string, expectedVersion?: bigint) => {
    if (isSystemDatabaseName(name))
      throw invalid(`${name} is a system database and cannot be deleted`, 'Cannot delete project');
    // The state the deletion is decided on (the last decision's, after any retry).
    let before: ProjectAggregate | undefined;
    const outcome = await projectCommand<Unstamped<ProjectCommand>>(ctx, {
      project: name,
      projects: directory,
      asGiven: true,
      command: { type: 'DeleteProject', data: { name, expectedVersion } },
      decide: (command: ProjectCommand, state) => {
        before = state;
        return decideProject(command, state);
      },
      answer: 'ahead',
    });
    if (before && outcome.events.length > 0) await ports.removed(before);
  },

  ensureDefault: async () => {
    // At start: what starts after it reads the projects table at once.
    await projectCommand<Unstamped<ProjectCommand>>(ctx, {
      project: DEFAULT_PROJECT,
      projects: directory,
      asGiven: true,
      command: { type: 'EnsureDefaultProject', data: { name: DEFAULT_PROJECT } },
      decide: decideProject,
      answer: 'settled',
    });
  },
});

export type ProjectsService = ReturnType<typeof projectsService>;
