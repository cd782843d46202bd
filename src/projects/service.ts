import { settled, type AppContext } from '../context';
import { databaseAggregate, databaseStream } from '../databases/aggregate';
import { conflict, invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { toMindsDbTimestamp } from '../shared/time';
import { DEFAULT_PROJECT, decideProject, type ProjectState } from './decider';
import { projectAggregate, projectStream } from './aggregate';
import type { ProjectView } from './schemas';

/** Names that belong to the system and can be neither projects nor integrations. */
export const RESERVED_DATABASE_NAMES = ['information_schema', 'files', 'log'];

type ProjectRow = { id: bigint; name: string; created_at: Date; version: bigint };

const present = (row: ProjectRow): ProjectView & { version: bigint } => ({
  id: Number(row.id),
  name: row.name,
  created_at: toMindsDbTimestamp(row.created_at),
  version: row.version,
});

/** The answer to a write, from the state the command produced (the projection has it too by now). */
const presentState = (state: ProjectState): ProjectView & { version: bigint } => {
  if (state.status !== 'live') throw new Error('a created project must be live');
  return {
    id: Number(state.id),
    name: state.name,
    created_at: toMindsDbTimestamp(state.createdAt),
    version: state.version,
  };
};

export const projectsService = (ctx: AppContext) => {
  const find = (name: string) =>
    ctx.cached(`project:${nameKey(name)}`, async () => {
      const rows = (await ctx.duck.query('SELECT * FROM projects WHERE lower(name) = ?', [
        nameKey(name),
      ])) as ProjectRow[];
      return rows[0] ? present(rows[0]) : undefined;
    });

  const service = {
    list: () =>
      ctx.cached('projects', async () =>
        ((await ctx.duck.query('SELECT * FROM projects ORDER BY id')) as ProjectRow[]).map(present),
      ),

    find,

    /** The project or a 404 in MindsDB's words. */
    require: async (name: string) => {
      const project = await find(name);
      if (!project) throw notFound(`Project name ${name} does not exist`, 'Project not found');
      return project;
    },

    create: async (name: string) => {
      if (RESERVED_DATABASE_NAMES.includes(nameKey(name)))
        throw conflict(
          `Database with name ${name} already exists (it is a system database)`,
          'Name conflict',
        );
      const integration = await ctx.commands.load(databaseStream(name), databaseAggregate);
      if (integration.state.status === 'live')
        throw conflict(`Database with name ${name} already exists.`, 'Name conflict');
      const outcome = await ctx.commands.run(projectStream(name), projectAggregate, (s) =>
        decideProject({ type: 'CreateProject', data: { name }, metadata: { now: ctx.clock() } }, s),
      );
      await settled(ctx, outcome.lastPosition);
      return presentState(outcome.state.project);
    },

    remove: async (name: string, expectedVersion?: bigint) => {
      if (RESERVED_DATABASE_NAMES.includes(nameKey(name)))
        throw invalid(`${name} is a system database and cannot be deleted`, 'Cannot delete project');
      const outcome = await ctx.commands.run(projectStream(name), projectAggregate, (s) =>
        decideProject(
          { type: 'DeleteProject', data: { name, expectedVersion }, metadata: { now: ctx.clock() } },
          s,
        ),
      );
      await settled(ctx, outcome.lastPosition);
    },

    ensureDefault: async () => {
      const outcome = await ctx.commands.run(projectStream(DEFAULT_PROJECT), projectAggregate, (s) =>
        decideProject(
          { type: 'EnsureDefaultProject', data: { name: DEFAULT_PROJECT }, metadata: { now: ctx.clock() } },
          s,
        ),
      );
      await settled(ctx, outcome.lastPosition);
    },
  };
  return service;
};

export type ProjectsService = ReturnType<typeof projectsService>;
