import { answeredAhead, settled, type AppContext } from '../context';
import { conflict, invalid } from '../shared/errors';
import { isSystemDatabaseName } from '../shared/names';
import { projectAggregate } from './aggregate';
import { decideProject, type ProjectCommand } from './decider';
import type { ProjectDirectory } from './directory';
import { presentProjectState } from './present';
import { DEFAULT_PROJECT, projectStream } from './state';

/** Whether an integration (a registered external database) holds a name: projects and integrations share one namespace. */
export type IntegrationNames = { isIntegration(name: string): Promise<boolean> };

/** Projects: reads through the directory, writes through the project's own stream. */
export const projectsService = (
  ctx: AppContext,
  directory: ProjectDirectory,
  integrations: IntegrationNames,
) => {
  /**
   * `ahead`: the answer is made from the command's own state, so it is given once the log has the
   * events; this process's reads wait for them instead (answeredAhead).
   */
  const run = async (name: string, command: ProjectCommand, answer: 'ahead' | 'settled') => {
    const outcome = await ctx.commands.run(projectStream(name), projectAggregate, (s) =>
      decideProject(command, s),
    );
    if (answer === 'ahead') answeredAhead(ctx, outcome.events);
    else await settled(ctx, outcome.lastPosition);
    return outcome;
  };
  return {
    ...directory,

    create: async (name: string) => {
      if (isSystemDatabaseName(name))
        throw conflict(
          `Database with name ${name} already exists (it is a system database)`,
          'Name conflict',
        );
      if (await integrations.isIntegration(name))
        throw conflict(`Database with name ${name} already exists.`, 'Name conflict');
      const outcome = await run(
        name,
        {
          type: 'CreateProject',
          data: { name },
          metadata: { now: ctx.clock() },
        },
        'ahead',
      );
      return presentProjectState(outcome.state.project);
    },

    remove: async (name: string, expectedVersion?: bigint) => {
      if (isSystemDatabaseName(name))
        throw invalid(`${name} is a system database and cannot be deleted`, 'Cannot delete project');
      await run(
        name,
        {
          type: 'DeleteProject',
          data: { name, expectedVersion },
          metadata: { now: ctx.clock() },
        },
        'ahead',
      );
    },

    ensureDefault: async () => {
      // At start: what starts after it reads the projects table at once.
      await run(
        DEFAULT_PROJECT,
        {
          type: 'EnsureDefaultProject',
          data: { name: DEFAULT_PROJECT },
          metadata: { now: ctx.clock() },
        },
        'settled',
      );
    },
  };
};

export type ProjectsService = ReturnType<typeof projectsService>;
