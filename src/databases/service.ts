import { settled, type AppContext } from '../context';
import { projectAggregate, projectStream } from '../projects/aggregate';
import { DEFAULT_PROJECT } from '../projects/decider';
import type { ProjectsService } from '../projects/service';
import { conflict, invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { toMindsDbTimestamp } from '../shared/time';
import { databaseAggregate, databaseStream } from './aggregate';
import { decideDatabase } from './decider';
import { validateConnection } from './engines';
import { checkConnection } from '../integrations/drivers';
import { keepMaskedSecrets } from '../shared/secrets';
import type { DatabaseView } from './schemas';

type DatabaseRow = {
  id: bigint;
  name: string;
  engine: string;
  connection_data: string;
  updated_at: Date;
  version: bigint;
};

/** Databases that always exist: MindsDB's system schema and the uploaded-files database. */
const systemDatabases: DatabaseView[] = [
  { name: 'information_schema', type: 'system', id: null, engine: null, visible: true, deletable: false },
  {
    name: 'files',
    type: 'data',
    id: null,
    engine: 'files',
    visible: true,
    deletable: false,
    class_type: 'sql',
    permanent: true,
  },
];

const presentIntegration = (row: DatabaseRow): DatabaseView & { version: bigint } => ({
  name: row.name,
  type: 'data',
  id: Number(row.id),
  engine: row.engine,
  visible: true,
  deletable: true,
  class_type: 'sql',
  connection_data: JSON.parse(row.connection_data) as Record<string, unknown>,
  permanent: false,
  date_last_update: toMindsDbTimestamp(row.updated_at),
  version: row.version,
});

/** The MindsDB database registry: system databases, projects, and registered integrations. */
export const databasesService = (ctx: AppContext, projects: ProjectsService) => {
  const findIntegration = (name: string) =>
    ctx.cached(`database:${nameKey(name)}`, async () => {
      const rows = (await ctx.duck.query('SELECT * FROM databases WHERE lower(name) = ?', [
        nameKey(name),
      ])) as DatabaseRow[];
      return rows[0] ? presentIntegration(rows[0]) : undefined;
    });

  const refuseSystem = (name: string, what: string) => {
    const system = systemDatabases.find((d) => d.name === nameKey(name));
    if (system) throw invalid(`Cannot ${what} database ${system.name}: it is a system database`, 'Error');
  };

  const runOn = async (name: string, decide: Parameters<typeof decideDatabase>[0]) => {
    const outcome = await ctx.commands.run(databaseStream(name), databaseAggregate, (s) =>
      decideDatabase(decide, s),
    );
    await settled(ctx, outcome.lastPosition);
  };

  const driverOptions = () => ({
    connectTimeoutMs: ctx.config.dbConnectTimeoutMs,
    queryTimeoutMs: ctx.config.sqlTimeoutMs,
  });

  /** Nothing is recorded for a database we cannot reach: the driver's own message says why. */
  const requireReachable = async (engine: string, parameters: Record<string, unknown>) => {
    const result = await checkConnection(engine, parameters, driverOptions());
    if (!result.ok) throw invalid(`Can't connect to db: ${result.message}`, 'Connection error');
  };

  const ensureNotProject = async (name: string) => {
    const project = await ctx.commands.load(projectStream(name), projectAggregate);
    if (project.state.project.status === 'live')
      throw conflict(`Project exists with this name: ${name}`, 'Name conflict');
  };

  const create = async (input: { name: string; engine: string; parameters?: Record<string, unknown> }) => {
    if (systemDatabases.some((d) => d.name === nameKey(input.name)) || nameKey(input.name) === 'log')
      throw conflict(`Database with name ${input.name} already exists.`, 'Name conflict');
    const parameters = validateConnection(input.engine, input.parameters);
    await ensureNotProject(input.name);
    await requireReachable(input.engine, parameters);
    await runOn(input.name, {
      type: 'CreateDatabase',
      data: { name: input.name, engine: input.engine.toLowerCase(), parameters },
      metadata: { now: ctx.clock() },
    });
    return (await findIntegration(input.name))!;
  };

  /** An integration by id or name, for resources that point at one (a chatbot's chat database). */
  const requireIntegration = async (ref: {
    id?: number;
    name?: string;
  }): Promise<{ id: bigint; name: string }> => {
    const rows = (
      ref.id !== undefined
        ? await ctx.duck.query('SELECT id, name FROM databases WHERE id = ?', [BigInt(ref.id)])
        : await ctx.duck.query('SELECT id, name FROM databases WHERE lower(name) = ?', [
            nameKey(ref.name ?? ''),
          ])
    ) as { id: bigint; name: string }[];
    const found = rows[0];
    if (!found)
      throw notFound(
        `Database with ${ref.id !== undefined ? `id ${ref.id}` : `name ${ref.name}`} does not exist.`,
        'Database not found',
      );
    return found;
  };

  return {
    requireIntegration,
    /** Checks parameters without saving anything (POST /api/databases/status). */
    checkStatus: async (engine: string, parameters: Record<string, unknown> | undefined) => {
      const validated = validateConnection(engine, parameters);
      const result = await checkConnection(engine, validated, driverOptions());
      return result.ok
        ? { status: 'success' as const }
        : { status: 'connection_error' as const, detail: result.message };
    },
    /** Whether any database (system, project or integration) has this name. */
    exists: async (name: string) =>
      systemDatabases.some((d) => d.name === nameKey(name)) ||
      (await projects.find(name)) !== undefined ||
      (await findIntegration(name)) !== undefined,
    findIntegration,
    list: () =>
      ctx.cached('databases', async () => {
        const projectRows = (await projects.list()).map((p): DatabaseView => ({
          name: p.name,
          type: 'project',
          id: p.id,
          engine: null,
          visible: true,
          deletable: nameKey(p.name) !== DEFAULT_PROJECT,
        }));
        const integrations = (
          (await ctx.duck.query('SELECT * FROM databases ORDER BY id')) as DatabaseRow[]
        ).map((r) => {
          const { version: _v, ...view } = presentIntegration(r);
          return view;
        });
        return [...systemDatabases, ...projectRows, ...integrations];
      }),

    /** One database by name, with the version its ETag carries (null for system databases). */
    get: async (name: string): Promise<{ view: DatabaseView; version: bigint | null }> => {
      const system = systemDatabases.find((d) => d.name === nameKey(name));
      if (system) return { view: system, version: null };
      const project = await projects.find(name);
      if (project)
        return {
          view: {
            name: project.name,
            type: 'project',
            id: project.id,
            engine: null,
            visible: true,
            deletable: nameKey(project.name) !== DEFAULT_PROJECT,
          },
          version: project.version,
        };
      const integration = await findIntegration(name);
      if (!integration) throw notFound(`Database with name ${name} does not exist.`, 'Database not found');
      const { version, ...view } = integration;
      return { view, version };
    },

    create,

    /** PUT semantics (MindsDB): update when it exists, otherwise create. */
    upsert: async (
      name: string,
      input: { engine?: string; parameters?: Record<string, unknown> },
      expectedVersion?: bigint,
    ): Promise<{ created: boolean; view: DatabaseView & { version: bigint } }> => {
      refuseSystem(name, 'change');
      if (await projects.find(name))
        throw invalid(`${name} is a project; projects have no engine or parameters to change`, 'Error');
      const existing = await ctx.commands.load(databaseStream(name), databaseAggregate);
      if (existing.state.status !== 'live') {
        if (!input.engine)
          throw invalid('database.engine is required to create a database', 'Invalid request');
        const view = await create({ name, engine: input.engine, parameters: input.parameters });
        return { created: true, view };
      }
      const engine = input.engine?.toLowerCase() ?? existing.state.engine;
      const requested = validateConnection(engine, input.parameters ?? existing.state.parameters);
      // Check what will be stored: masked secrets echoed back mean the stored ones.
      const parameters = keepMaskedSecrets(requested, existing.state.parameters);
      await requireReachable(engine, parameters);
      await runOn(name, {
        type: 'UpdateDatabase',
        data: { name, engine, parameters, expectedVersion },
        metadata: { now: ctx.clock() },
      });
      return { created: false, view: (await findIntegration(name))! };
    },

    remove: async (name: string, expectedVersion?: bigint) => {
      refuseSystem(name, 'delete');
      if (await projects.find(name)) return projects.remove(name, expectedVersion);
      await runOn(name, {
        type: 'DeleteDatabase',
        data: { name, expectedVersion },
        metadata: { now: ctx.clock() },
      });
    },
  };
};

export type DatabasesService = ReturnType<typeof databasesService>;
