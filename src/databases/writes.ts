import type { AppContext } from '../context';
import { loadProject, streamCommand } from '../projectCommand';
import { readModelAt } from '../projection/readModelAt';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { conflict, invalid, isNotFoundError } from '../shared/errors';
import { isSystemDatabaseName } from '../shared/names';
import type { Unstamped } from '../shared/params';
import { keepMaskedSecrets, MASK, maskSecrets, requireSecretsForNewDestination } from '../shared/secrets';
import { requireReachable } from './connections';
import { decideDatabase, type DatabaseCommand } from './decider';
import { validateConnection } from './engines';
import { systemView, type IntegrationFinder } from './reads';
import { databaseAggregate, databaseStream } from './state';

/** Projects are databases too: the registry lists them, and `DELETE /api/databases/<project>` deletes one. */
export type ProjectDatabases = ProjectDirectory & {
  remove(name: string, expectedVersion?: bigint): Promise<void>;
};

/**
 * The triggers watching a table of a database, as `project.trigger`: each installed a function and a
 * row trigger there (docs/sql.md), which only its DROP TRIGGER, reaching the database, removes.
 */
export type DatabaseWatchers = (database: string) => Promise<string[]>;

/**
 * What the writes need: the log, the projects (one namespace with integrations), the integrations
 * read back, the triggers watching them.
 */
export type DatabaseWriteDeps = {
  readonly ctx: AppContext;
  readonly projects: ProjectDatabases;
  readonly findIntegration: IntegrationFinder;
  readonly watchers: DatabaseWatchers;
};

const refuseSystem = (name: string, what: string) => {
  const system = systemView(name);
  if (system) throw invalid(`Cannot ${what} database ${system.name}: it is a system database`, 'Error');
};

const refuseReservedName = (name: string) => {
  if (isSystemDatabaseName(name))
    throw conflict(`Database with name ${name} already exists.`, 'Name conflict');
};

const runOn = (ctx: AppContext, name: string, command: Unstamped<DatabaseCommand>) =>
  streamCommand(ctx, {
    stream: databaseStream(name),
    aggregate: databaseAggregate,
    command,
    decide: decideDatabase,
    answer: 'settled',
  });

/** Projects and integrations share one namespace; the project's own stream is the truth. */
const ensureNotProject = async ({ ctx, projects }: DatabaseWriteDeps, name: string) => {
  if ((await loadProject(ctx, projects, name)).project.status === 'live')
    throw conflict(`Project exists with this name: ${name}`, 'Name conflict');
};

/** Registers an integration: its name free, its engine named, its connection reachable. */
export const createDatabase = async (
  deps: DatabaseWriteDeps,
  input: { name: string; engine?: string; parameters?: Record<string, unknown> },
) => {
  refuseReservedName(input.name);
  // The name first, then the engine and parameters (MindsDB's order; clients rely on the 409).
  const { ctx, findIntegration } = deps;
  await ensureNotProject(deps, input.name);
  if (await findIntegration(input.name))
    throw conflict(`Database with name ${input.name} already exists.`, 'Name conflict');
  const engine = input.engine?.trim();
  if (!engine)
    throw invalid(
      'database.engine is required; a database without an engine is a project: use POST /api/projects',
      'Invalid request',
    );
  const parameters = validateConnection(engine, input.parameters);
  await requireReachable(ctx, engine, parameters);
  await runOn(ctx, input.name, {
    type: 'CreateDatabase',
    data: { name: input.name, engine: engine.toLowerCase(), parameters },
  });
  return (await findIntegration(input.name))!;
};

/**
 * Refuses what would leave the triggers watching `name` out of reach of their DROP TRIGGER: deleted,
 * or connected elsewhere (another host, database, schema or user), the database would keep their
 * functions, row triggers and queue, its clients' INSERTs filling the queue for good. The triggers
 * are read once the read model holds the log as it is now: one created a moment ago on another
 * process of a shared log is seen (this process's read model may not have applied it yet).
 */
const refuseWhileWatched = async (
  { ctx, watchers }: Pick<DatabaseWriteDeps, 'ctx' | 'watchers'>,
  name: string,
  what: string,
) => {
  const { position } = await ctx.log.head();
  await readModelAt(
    ctx.projections,
    position,
    ctx.config.readMinPositionWaitMs,
    `the log's head (position ${position}), which the triggers watching ${name} are read from`,
  );
  const watching = await watchers(name);
  if (watching.length > 0)
    throw conflict(
      `Database ${name} is watched by ${watching.length === 1 ? 'trigger' : 'triggers'} ${watching.join(', ')}, so ${what}: DROP TRIGGER first, which removes what it installed in the database`,
      'Database in use',
    );
};

/** Where a connection goes and as whom: its parameters but its secrets (given or not), keys in order. */
const placeOf = (parameters: Record<string, unknown>) => {
  const shown = maskSecrets(parameters);
  const kept = Object.keys(shown).filter((key) => shown[key] !== MASK);
  return JSON.stringify(kept.sort().map((key) => [key, shown[key]]));
};

/**
 * PUT semantics (MindsDB): update when it exists, otherwise create. Decided on the stream's
 * state at append time, so of concurrent PUTs of a new name one creates (201) and the others
 * update it (200), as for skills and chatbots.
 */
export const upsertDatabase = async (
  deps: DatabaseWriteDeps,
  name: string,
  input: { engine?: string; parameters?: Record<string, unknown> },
  expectedVersion?: bigint,
) => {
  refuseSystem(name, 'change');
  const { ctx, projects, findIntegration } = deps;
  if (await projects.find(name))
    throw invalid(`${name} is a project; projects have no engine or parameters to change`, 'Error');
  const existing = await ctx.commands.load(databaseStream(name), databaseAggregate);
  const live = existing.state.status === 'live' ? existing.state : undefined;
  const engine = (input.engine ?? live?.engine)?.toLowerCase();
  if (!engine) throw invalid('database.engine is required to create a database', 'Invalid request');
  if (!live) {
    refuseReservedName(name);
    await ensureNotProject(deps, name);
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
  if (live && (live.engine !== engine || placeOf(live.parameters) !== placeOf(parameters)))
    await refuseWhileWatched(deps, name, 'its connection cannot change (a new password may)');
  await requireReachable(ctx, engine, parameters);
  const outcome = await runOn(ctx, name, {
    type: 'PutDatabase',
    data: { name, engine, parameters, expectedVersion },
  });
  return { created: outcome.events[0]?.type === 'DatabaseCreated', view: (await findIntegration(name))! };
};

/**
 * Deletes an integration (or a project). With `forget`, the integration's secrets are forgotten
 * too (crypto-shredding); asked again of an integration already deleted, it forgets what its
 * keys still open (a forget cut short by a crash), and is not found only when nothing was left.
 */
export const removeDatabase = async (
  { ctx, projects, watchers }: DatabaseWriteDeps,
  name: string,
  expectedVersion?: bigint,
  options: { forget?: boolean } = {},
) => {
  refuseSystem(name, 'delete');
  await refuseWhileWatched({ ctx, watchers }, name, 'it cannot be deleted');
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
    await runOn(ctx, name, {
      type: 'DeleteDatabase',
      data: { name, expectedVersion },
    });
  } catch (error) {
    if (options.forget && isNotFoundError(error) && (await forget()) > 0) return;
    throw error;
  }
  if (options.forget) await forget();
};
