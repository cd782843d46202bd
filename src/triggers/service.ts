import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { projectCommand, resourceCommand, type RemoveByName } from '../projectCommand';
import type { ProjectAggregate } from '../shared/projectState';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, notFound } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import type { Unstamped } from '../shared/params';
import { decideTrigger, type TriggerCommand } from './decider';
import { triggerRowByName, triggerRowsWatching, type TriggerRow } from './projection';
import { installStatements, uninstallStatements } from './source';

/** The external databases as triggers need them (filled by the composition root). */
export type TriggerSource = {
  /**
   * The integration's canonical name, engine and schema (its `schema` connection parameter, else
   * `public`: where our objects go), or undefined when `database` is not one.
   */
  integration(database: string): Promise<{ name: string; engine: string; schema: string } | undefined>;
  /** Runs statements in one transaction of that database. */
  run(database: string, statements: string[], params?: unknown[][]): Promise<void>;
  /** The rows a query of that database answers. */
  rows(database: string, sql: string, params: unknown[]): Promise<unknown[][]>;
};

type NewTrigger = {
  name: string;
  database: string;
  table: string;
  columns: string[] | null;
  query: string;
};

/** Who creates a trigger: its statements run as they would. */
const requestOwner = () => {
  const principal = currentRequest()?.principal;
  return {
    user: principal?.user ?? null,
    role: principal?.role ?? null,
    project: principal?.project ?? null,
  };
};

/** The PostgreSQL database a new trigger watches a table of, or 400 for any other. */
const watchable = async (source: TriggerSource, t: NewTrigger) => {
  const integration = await source.integration(t.database);
  if (!integration)
    throw invalid(
      `CREATE TRIGGER on ${t.database}.${t.table} is not supported: ${t.database} is not an external database (triggers watch tables of PostgreSQL databases registered with CREATE DATABASE)`,
      'Trigger not supported',
    );
  if (integration.engine !== 'postgres')
    throw invalid(
      `CREATE TRIGGER on ${integration.engine === 'mysql' || integration.engine === 'mariadb' ? 'MariaDB' : integration.engine} sources is not supported (${integration.name}.${t.table}): triggers watch PostgreSQL tables`,
      'Trigger not supported',
    );
  if (!t.query.trim()) throw invalid('A trigger needs at least one statement', 'Empty trigger');
  return integration;
};

/**
 * Triggers: statements that run for the rows an external PostgreSQL table gains or changes. The
 * definition lives in the project's stream; what watches the table is installed in the source
 * database first (named by a key the event keeps), and removed if the definition is not recorded.
 */
export const triggersService = (ctx: AppContext, projects: ProjectDirectory, source: () => TriggerSource) => {
  const findRow = async (projectName: string, name: string): Promise<TriggerRow> => {
    const project = await projects.require(projectName);
    const row = await triggerRowByName(ctx.duck, project.id, name);
    if (!row) throw notFound(`Trigger with name ${name} does not exist`, 'Trigger not found');
    return row;
  };

  const create = async (projectName: string, t: NewTrigger) => {
    const project = await projects.require(projectName);
    const integration = await watchable(source(), t);
    const key = crypto.randomBytes(6).toString('hex');
    await source()
      .run(integration.name, installStatements(key, integration.schema, t.table, t.columns))
      .catch((error: unknown) => {
        throw invalid(
          `CREATE TRIGGER on ${integration.name}.${t.table}: ${(error as Error).message}`,
          'Trigger not installed',
        );
      });
    try {
      await projectCommand<Unstamped<TriggerCommand>>(ctx, {
        project: project.name,
        projects,
        asGiven: true,
        command: {
          type: 'CreateTrigger',
          data: {
            name: t.name,
            database: integration.name,
            table: t.table,
            columns: t.columns,
            query: t.query,
            key,
            owner: requestOwner(),
          },
        },
        decide: decideTrigger,
        answer: 'settled',
      });
    } catch (error) {
      // Not recorded: nothing may stay installed in the source.
      await source()
        .run(integration.name, uninstallStatements(key, integration.schema, t.table))
        .catch(() => undefined);
      throw error;
    }
    return findRow(project.name, t.name);
  };

  /**
   * Removes what a trigger installed in its source (its function, trigger and queue rows, and the
   * queue table with the schema's last trigger): logged, not thrown. The schema is the integration's.
   */
  const uninstall = async (trigger: { id: bigint; database: string; table: string; key: string }) => {
    try {
      const integration = await source().integration(trigger.database);
      if (!integration) throw new Error(`${trigger.database} is not an external database`);
      await source().run(
        integration.name,
        uninstallStatements(trigger.key, integration.schema, trigger.table),
      );
    } catch (error) {
      ctx.logger.warn(
        { err: error, trigger: String(trigger.id) },
        'trigger objects not removed from the source',
      );
    }
  };

  /** Once a project's deletion (which records its triggers') is in the log: their objects in their sources go. */
  const projectRemoved = async (before: ProjectAggregate) => {
    for (const trigger of before.triggers.values()) await uninstall(trigger);
  };

  /** `forget`: the secrets its statements hold are forgotten too (crypto-shredding). */
  const remove: RemoveByName = async (projectName, name, ifExists, options = {}) => {
    const project = await projects.require(projectName);
    const row = await triggerRowByName(ctx.duck, project.id, name);
    const outcome = await resourceCommand<Unstamped<TriggerCommand>>(ctx, {
      project: project.name,
      projects,
      asGiven: true,
      command: { type: 'DeleteTrigger', data: { name, ifExists } },
      decide: decideTrigger,
      answer: 'settled',
      forgetting: options.forget ? 'TriggerDeleted' : undefined,
    });
    // Recorded first, then removed from the source: a firing after this finds the trigger gone.
    if (row && outcome.events.length > 0)
      await uninstall({ id: row.ID, database: row.DATABASE, table: row.TABLE, key: row.KEY });
  };

  /** The triggers watching a table of `database`, as `project.trigger`. */
  const watching = async (database: string) =>
    (await triggerRowsWatching(ctx.duck, database)).map((row) => `${row.PROJECT}.${row.NAME}`);

  return { create, remove, projectRemoved, watching };
};

export type TriggersService = ReturnType<typeof triggersService>;
