import type { AppContext } from '../context';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { DEFAULT_PROJECT } from '../shared/projectState';
import { notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { presentIntegration, presentProjectDatabase, systemDatabaseViews } from './present';
import { databaseRowById, databaseRowByName, databaseRows, databasesTable } from './projection';
import type { DatabaseView } from './schemas';

/**
 * An integration by name, as presented (secrets masked), read through the databases table's cache:
 * kept until a batch changes that table. Every SQL query asks it while resolving its names (is
 * `load` of `load.skills` an integration?); on the cache every batch emptied, each query under
 * steady writes elsewhere (skills created) read the table again, a parameterised query's five trips
 * to DuckDB's threads while holding its reader.
 */
export const integrationFinder = (ctx: AppContext) => (name: string) =>
  ctx.cachedOf(databasesTable.table)(`database:${nameKey(name)}`, async () => {
    const row = await databaseRowByName(ctx.duck, name);
    return row ? presentIntegration(row) : undefined;
  });

export type IntegrationFinder = ReturnType<typeof integrationFinder>;

export const systemView = (name: string) => systemDatabaseViews.find((d) => d.name === nameKey(name));

const projectView = (p: { id: number; name: string }) =>
  presentProjectDatabase(p, nameKey(p.name) !== DEFAULT_PROJECT);

/** An integration by id or name, for resources that point at one (a chatbot's chat database). */
export const requireIntegration = async (
  ctx: AppContext,
  ref: { id?: number; name?: string },
): Promise<{ id: bigint; name: string }> => {
  const found =
    ref.id !== undefined
      ? await databaseRowById(ctx.duck, ref.id)
      : await databaseRowByName(ctx.duck, ref.name ?? '');
  if (!found)
    throw notFound(
      `Database with ${ref.id !== undefined ? `id ${ref.id}` : `name ${ref.name}`} does not exist.`,
      'Database not found',
    );
  return { id: found.id, name: found.name };
};

/**
 * Every database: the system ones, the projects, then the integrations (secrets masked). Each part
 * is kept while its own table stays put (the projects by the directory's cache), not emptied by
 * every write elsewhere.
 */
export const listDatabases = async (ctx: AppContext, projects: ProjectDirectory): Promise<DatabaseView[]> => {
  const integrations = ctx.cachedOf(databasesTable.table)('databases', async () =>
    (await databaseRows(ctx.duck)).map((r) => {
      const { version: _v, ...view } = presentIntegration(r);
      return view;
    }),
  );
  return [...systemDatabaseViews, ...(await projects.list()).map(projectView), ...(await integrations)];
};

/** One database by name, with the version its ETag carries (null for system databases). */
export const getDatabase = async (
  projects: ProjectDirectory,
  findIntegration: IntegrationFinder,
  name: string,
): Promise<{ view: DatabaseView; version: bigint | null }> => {
  const system = systemView(name);
  if (system) return { view: system, version: null };
  const project = await projects.find(name);
  if (project) return { view: projectView(project), version: project.version };
  const integration = await findIntegration(name);
  if (!integration) throw notFound(`Database with name ${name} does not exist.`, 'Database not found');
  const { version, ...view } = integration;
  return { view, version };
};
