import type { AppContext } from '../context';
import { projectCommand } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { decideView, type ViewCommand } from './decider';
import { presentView } from './present';
import { viewRowByName, viewRowsOfProject } from './projection';

/**
 * Why a view's name or query would not do in a project (a name the project's own tables have, a
 * query that is not a SELECT or does not resolve), or null. The SQL interface answers it: a view is
 * checked by planning its query as the SQL endpoint would.
 */
export type ViewCheck = (project: string, name: string, query: string) => Promise<string | null>;

/** Reads come from the `views` projection; definitions live in the project's stream. */
export const viewsService = (ctx: AppContext, projects: ProjectDirectory, check: ViewCheck) => {
  const findRow = async (projectName: string, name: string) => {
    const project = await projects.require(projectName);
    const row = await viewRowByName(ctx.duck, project.id, name);
    if (!row) throw notFound(`View with name ${name} does not exist`, 'View not found');
    return row;
  };

  const checked = async (project: string, name: string, query: string) => {
    const problem = await check(project, name, query);
    if (problem !== null) throw invalid(`View ${name}: ${problem}`, 'Invalid view');
  };

  const run = (projectName: string, command: Unstamped<ViewCommand>) =>
    projectCommand(ctx, { project: projectName, projects, command, decide: decideView, answer: 'settled' });

  /** CREATE [OR REPLACE] VIEW, POST and PUT: `created` says whether the view is new. */
  const create = async (
    projectName: string,
    view: { name: string; query: string; replace?: boolean; ifNotExists?: boolean },
  ) => {
    const project = await projects.require(projectName);
    await checked(project.name, view.name, view.query);
    const { events } = await run(project.name, {
      type: 'CreateView',
      data: {
        name: view.name,
        query: view.query,
        replace: view.replace ?? false,
        ifNotExists: view.ifNotExists ?? false,
      },
    });
    const created = events.some((e) => e.type === 'ViewCreated');
    return { view: presentView(await findRow(project.name, view.name)), created };
  };

  /** ALTER VIEW and PATCH: a new query, or a new name. */
  const update = async (projectName: string, name: string, change: { name?: string; query?: string }) => {
    const project = await projects.require(projectName);
    const current = await findRow(project.name, name);
    if (change.query !== undefined || change.name !== undefined)
      await checked(project.name, change.name ?? current.NAME, change.query ?? current.QUERY);
    await run(project.name, {
      type: 'UpdateView',
      data: { name, newName: change.name, query: change.query },
    });
    return presentView(await findRow(project.name, change.name ?? name));
  };

  const remove = async (projectName: string, name: string, ifExists = false) => {
    await run(projectName, { type: 'DeleteView', data: { name, ifExists } });
  };

  return {
    create,
    update,
    remove,
    list: async (projectName: string) => {
      const project = await projects.require(projectName);
      return (await viewRowsOfProject(ctx.duck, project.id)).map(presentView);
    },
    get: async (projectName: string, name: string) => presentView(await findRow(projectName, name)),
    /** The query of `project.name` when it is a view (what a SELECT of it reads). */
    queryOf: async (projectName: string, name: string) => {
      const project = await projects.find(projectName);
      if (!project) return undefined;
      return (await viewRowByName(ctx.duck, project.id, name))?.QUERY;
    },
  };
};

export type ViewsService = ReturnType<typeof viewsService>;
