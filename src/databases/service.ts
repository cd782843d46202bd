import type { AppContext } from '../context';
import { isSystemDatabaseName, nameKey } from '../shared/names';
import type { DatabaseView } from './schemas';
import { tryConnection } from './connections';
import { isChannelEngine, validateConnection } from './engines';
import { integrationNames } from './projection';
import { getDatabase, integrationFinder, listDatabases, requireIntegration } from './reads';
import { databaseAggregate, databaseStream } from './state';
import {
  createDatabase,
  removeDatabase,
  upsertDatabase,
  type DatabaseWriteDeps,
  type DatabaseWatchers,
  type ProjectDatabases,
} from './writes';

/** The MindsDB database registry: system databases, projects, and registered integrations. */
export const databasesService = (ctx: AppContext, projects: ProjectDatabases, watchers: DatabaseWatchers) => {
  const findIntegration = integrationFinder(ctx);
  const writes: DatabaseWriteDeps = { ctx, projects, findIntegration, watchers };

  return {
    /** An integration by id or name, for resources that point at one (a chatbot's chat database). */
    requireIntegration: (ref: { id?: number; name?: string }): Promise<{ id: bigint; name: string }> =>
      requireIntegration(ctx, ref),

    /**
     * A chat channel's engine and connection parameters, secrets included, read from the log (the
     * read model holds masks): what a chatbot's channel adapter needs. Undefined for anything else.
     */
    channelConnection: async (name: string) => {
      const { state } = await ctx.commands.load(databaseStream(name), databaseAggregate);
      if (state.status !== 'live' || !isChannelEngine(state.engine)) return undefined;
      return { engine: state.engine, parameters: state.parameters };
    },

    /**
     * Whether an integration of this name is live (a project create's namespace check): the names in
     * the read model, read again only when the `databases` table changes. That table is the cache the
     * log's tail keeps of every database stream: it holds every integration this process registered
     * (those writes wait for it) and other processes' as far as the tail has read. Reading the
     * stream instead cost every project create a round trip to the log, and still left the check
     * racy across processes: a project and an integration live on two streams, so nothing makes
     * their names' check and the append one step.
     */
    isIntegration: async (name: string) =>
      (await ctx.cachedOf('databases')('integration-names', () => integrationNames(ctx.duck))).has(
        nameKey(name),
      ),

    /** Checks parameters without saving anything (POST /api/databases/status). */
    checkStatus: async (engine: string, parameters: Record<string, unknown> | undefined) => {
      const result = await tryConnection(ctx, engine, validateConnection(engine, parameters));
      return result.ok
        ? { status: 'success' as const }
        : { status: 'connection_error' as const, detail: result.detail };
    },

    /** Whether any database (system, project or integration) has this name. */
    exists: async (name: string) =>
      isSystemDatabaseName(name) ||
      (await projects.find(name)) !== undefined ||
      (await findIntegration(name)) !== undefined,

    findIntegration,

    list: (): Promise<DatabaseView[]> => listDatabases(ctx, projects),

    /** One database by name, with the version its ETag carries (null for system databases). */
    get: (name: string): Promise<{ view: DatabaseView; version: bigint | null }> =>
      getDatabase(projects, findIntegration, name),

    create: (input: { name: string; engine?: string; parameters?: Record<string, unknown> }) =>
      createDatabase(writes, input),

    /** PUT semantics (MindsDB): update when it exists, otherwise create (see upsertDatabase). */
    upsert: (
      name: string,
      input: { engine?: string; parameters?: Record<string, unknown> },
      expectedVersion?: bigint,
    ): Promise<{ created: boolean; view: DatabaseView & { version: bigint } }> =>
      upsertDatabase(writes, name, input, expectedVersion),

    /** Deletes an integration (or a project); with `forget`, its secrets too (see removeDatabase). */
    remove: (name: string, expectedVersion?: bigint, options?: { forget?: boolean }) =>
      removeDatabase(writes, name, expectedVersion, options),
  };
};

export type DatabasesService = ReturnType<typeof databasesService>;
