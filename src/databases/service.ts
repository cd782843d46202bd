import { settled, type AppContext } from '../context';
import type { ProjectDirectory } from '../projects/directory';
import { DEFAULT_PROJECT, projectStream } from '../projects/state';
import { projectAggregate } from '../projects/aggregate';
import { checkConnection } from '../integrations/drivers';
import { conflict, invalid, isNotFoundError, notFound } from '../shared/errors';
import { isSystemDatabaseName, nameKey } from '../shared/names';
import { currentRequest } from '../shared/requestContext';
import { keepMaskedSecrets, requireSecretsForNewDestination } from '../shared/secrets';
import { decideDatabase, type DatabaseCommand } from './decider';
import { isChannelEngine, validateConnection } from './engines';
import { presentIntegration, presentProjectDatabase, systemDatabaseViews } from './present';
import { databaseRowById, databaseRowByName, databaseRows, integrationNames } from './projection';
import type { DatabaseView } from './schemas';
import { databaseAggregate, databaseStream } from './state';

/** Projects are databases too: the registry lists them, and `DELETE /api/databases/<project>` deletes one. */
export type ProjectDatabases = ProjectDirectory & {
  remove(name: string, expectedVersion?: bigint): Promise<void>;
};

/** The MindsDB database registry: system databases, projects, and registered integrations. */
export const databasesService = (ctx: AppContext, projects: ProjectDatabases) => {
  const findIntegration = (name: string) =>
    ctx.cached(`database:${nameKey(name)}`, async () => {
      const row = await databaseRowByName(ctx.duck, name);
      return row ? presentIntegration(row) : undefined;
    });

  const systemView = (name: string) => systemDatabaseViews.find((d) => d.name === nameKey(name));

  const refuseSystem = (name: string, what: string) => {
    const system = systemView(name);
    if (system) throw invalid(`Cannot ${what} database ${system.name}: it is a system database`, 'Error');
  };

  const refuseReservedName = (name: string) => {
    if (isSystemDatabaseName(name))
      throw conflict(`Database with name ${name} already exists.`, 'Name conflict');
  };

  const runOn = async (name: string, command: DatabaseCommand) => {
    const outcome = await ctx.commands.run(databaseStream(name), databaseAggregate, (s) =>
      decideDatabase(command, s),
    );
    await settled(ctx, outcome.lastPosition);
    return outcome;
  };

  const driverOptions = () => ({
    connectTimeoutMs: ctx.config.dbConnectTimeoutMs,
    queryTimeoutMs: ctx.config.sqlTimeoutMs,
  });

  /**
   * Whether a connection with these parameters works. Unless DB_HOST_ALLOWLIST limits the hosts,
   * a failure is reported without the driver's reason (it is logged with the request id): "port
   * closed", "port open" and "that is a MySQL server" must read the same, or registering a
   * database becomes a scanner of the internal network.
   */
  const tryConnection = async (
    engine: string,
    parameters: Record<string, unknown>,
  ): Promise<{ ok: true } | { ok: false; detail: string }> => {
    // Connected to the address that was checked (no second lookup for DNS rebinding to answer).
    const host = await ctx.config.dbHosts.check(String(parameters.host ?? ''));
    const result = await checkConnection(engine, { ...parameters, host }, driverOptions());
    if (result.ok) return result;
    const where = `${String(parameters.host)}:${String(parameters.port ?? '(default port)')}`;
    const requestId = currentRequest()?.requestId;
    ctx.logger.warn(
      { reqId: requestId, engine, host: parameters.host, port: parameters.port, reason: result.message },
      'external database connection failed',
    );
    if (ctx.config.dbHosts.restricted) return { ok: false, detail: result.message };
    return {
      ok: false,
      detail:
        `could not connect to the ${engine} server at ${where} with these parameters. ` +
        `Unreachable hosts, closed ports, wrong credentials and unknown databases are reported alike here; ` +
        `the server log has the reason${requestId ? ` (request id ${requestId})` : ''}.`,
    };
  };

  /** Nothing is recorded for a database we cannot reach. */
  const requireReachable = async (engine: string, parameters: Record<string, unknown>) => {
    // A chat channel is checked when its chatbot runs (its errors show in the chatbot's last_error);
    // a webhook's URL must be a destination the outbound policy admits (403 now, nothing sent).
    if (isChannelEngine(engine)) {
      if (engine.toLowerCase() === 'webhook' && typeof parameters.url === 'string')
        await ctx.config.outbound.checkUrl(parameters.url, 'Webhook url');
      return;
    }
    const result = await tryConnection(engine, parameters);
    if (!result.ok) throw invalid(`Can't connect to db: ${result.detail}`, 'Connection error');
  };

  /** Projects and integrations share one namespace; the project's own stream is the truth. */
  const ensureNotProject = async (name: string) => {
    const project = await ctx.commands.load(projectStream(name), projectAggregate);
    if (project.state.project.status === 'live')
      throw conflict(`Project exists with this name: ${name}`, 'Name conflict');
  };

  const create = async (input: { name: string; engine?: string; parameters?: Record<string, unknown> }) => {
    refuseReservedName(input.name);
    // The name first, then the engine and parameters (MindsDB's order; clients rely on the 409).
    await ensureNotProject(input.name);
    if (await findIntegration(input.name))
      throw conflict(`Database with name ${input.name} already exists.`, 'Name conflict');
    const engine = input.engine?.trim();
    if (!engine)
      throw invalid(
        'database.engine is required; a database without an engine is a project: use POST /api/projects',
        'Invalid request',
      );
    const parameters = validateConnection(engine, input.parameters);
    await requireReachable(engine, parameters);
    await runOn(input.name, {
      type: 'CreateDatabase',
      data: { name: input.name, engine: engine.toLowerCase(), parameters },
      metadata: { now: ctx.clock() },
    });
    return (await findIntegration(input.name))!;
  };

  const projectView = (p: { id: number; name: string }) =>
    presentProjectDatabase(p, nameKey(p.name) !== DEFAULT_PROJECT);

  return {
    /** An integration by id or name, for resources that point at one (a chatbot's chat database). */
    requireIntegration: async (ref: {
      id?: number;
      name?: string;
    }): Promise<{ id: bigint; name: string }> => {
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
    },

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
      const result = await tryConnection(engine, validateConnection(engine, parameters));
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

    list: () =>
      ctx.cached('databases', async (): Promise<DatabaseView[]> => {
        const integrations = (await databaseRows(ctx.duck)).map((r) => {
          const { version: _v, ...view } = presentIntegration(r);
          return view;
        });
        return [...systemDatabaseViews, ...(await projects.list()).map(projectView), ...integrations];
      }),

    /** One database by name, with the version its ETag carries (null for system databases). */
    get: async (name: string): Promise<{ view: DatabaseView; version: bigint | null }> => {
      const system = systemView(name);
      if (system) return { view: system, version: null };
      const project = await projects.find(name);
      if (project) return { view: projectView(project), version: project.version };
      const integration = await findIntegration(name);
      if (!integration) throw notFound(`Database with name ${name} does not exist.`, 'Database not found');
      const { version, ...view } = integration;
      return { view, version };
    },

    create,

    /**
     * PUT semantics (MindsDB): update when it exists, otherwise create. Decided on the stream's
     * state at append time, so of concurrent PUTs of a new name one creates (201) and the others
     * update it (200), as for skills and chatbots.
     */
    upsert: async (
      name: string,
      input: { engine?: string; parameters?: Record<string, unknown> },
      expectedVersion?: bigint,
    ): Promise<{ created: boolean; view: DatabaseView & { version: bigint } }> => {
      refuseSystem(name, 'change');
      if (await projects.find(name))
        throw invalid(`${name} is a project; projects have no engine or parameters to change`, 'Error');
      const existing = await ctx.commands.load(databaseStream(name), databaseAggregate);
      const live = existing.state.status === 'live' ? existing.state : undefined;
      const engine = (input.engine ?? live?.engine)?.toLowerCase();
      if (!engine) throw invalid('database.engine is required to create a database', 'Invalid request');
      if (!live) {
        refuseReservedName(name);
        await ensureNotProject(name);
      }
      const requested = validateConnection(engine, input.parameters ?? live?.parameters);
      // Check what will be stored: masked secrets echoed back mean the stored ones, unless the host,
      // port or URL changes (a stored password goes only where it was stored for): refused before
      // any connection is tried.
      const parameters = keepMaskedSecrets(requested, live?.parameters);
      requireSecretsForNewDestination(
        input.parameters ?? live?.parameters ?? {},
        live?.parameters,
        parameters,
        live && live.engine !== engine ? 'engine' : undefined,
      );
      await requireReachable(engine, parameters);
      const outcome = await runOn(name, {
        type: 'PutDatabase',
        data: { name, engine, parameters, expectedVersion },
        metadata: { now: ctx.clock() },
      });
      return { created: outcome.events[0]?.type === 'DatabaseCreated', view: (await findIntegration(name))! };
    },

    /**
     * Deletes an integration (or a project). With `forget`, the integration's secrets are forgotten
     * too (crypto-shredding); asked again of an integration already deleted, it forgets what its
     * keys still open (a forget cut short by a crash), and is not found only when nothing was left.
     */
    remove: async (name: string, expectedVersion?: bigint, options: { forget?: boolean } = {}) => {
      refuseSystem(name, 'delete');
      if (await projects.find(name)) {
        if (options.forget)
          throw invalid(
            `${name} is a project: it holds no secrets of its own. Delete its resources with forget first, then the project.`,
            'Error',
          );
        return projects.remove(name, expectedVersion);
      }
      const forget = () =>
        ctx.secrets.forget(
          { stream: databaseStream(name), eventType: 'DatabaseCreated', name },
          `database ${name} deleted with forget`,
        );
      try {
        await runOn(name, {
          type: 'DeleteDatabase',
          data: { name, expectedVersion },
          metadata: { now: ctx.clock() },
        });
      } catch (error) {
        if (options.forget && isNotFoundError(error) && (await forget()) > 0) return;
        throw error;
      }
      if (options.forget) await forget();
    },
  };
};

export type DatabasesService = ReturnType<typeof databasesService>;
