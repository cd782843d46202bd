import { isChannelEngine } from './engines';
import type { AppContext } from '../context';
import { databaseAggregate, databaseStream } from './state';
import { invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { connect, type DriverOptions, type ExternalDatabase } from '../integrations/drivers';

/**
 * One pool per registered database, opened on first use from the log's state (which holds the
 * real credentials), replaced when the registration changes, closed when it is dropped.
 */
export const externalDatabases = (ctx: AppContext, options: DriverOptions) => {
  const open = new Map<string, { version: bigint; db: ExternalDatabase }>();

  const closeOne = async (key: string) => {
    const entry = open.get(key);
    open.delete(key);
    await entry?.db.close().catch(() => undefined);
  };

  // Every process keeps its pools in step with the log, whoever changed the registration.
  ctx.projections.onApplied((events) => {
    for (const e of events)
      if (e.type === 'DatabaseUpdated' || e.type === 'DatabaseDeleted')
        void closeOne(nameKey((e.data as { name: string }).name));
  });

  return {
    get: async (name: string): Promise<ExternalDatabase> => {
      const key = nameKey(name);
      const { state } = await ctx.commands.load(databaseStream(name), databaseAggregate);
      if (state.status !== 'live') throw notFound(`Database ${name} does not exist`, 'Database not found');
      if (isChannelEngine(state.engine))
        throw invalid(
          `${state.name} is a ${state.engine} chat channel (a chatbot's database): it has no tables to query`,
          'Not a SQL database',
        );
      const entry = open.get(key);
      if (entry && entry.version === state.version) return entry.db;
      if (entry) await closeOne(key);
      // A registration older than the allow-list is held to it too.
      const host = await ctx.config.dbHosts.check(String(state.parameters.host ?? ''));
      const db = connect(state.engine, { ...state.parameters, host }, options);
      open.set(key, { version: state.version, db });
      return db;
    },
    closeAll: async () => {
      for (const key of [...open.keys()]) await closeOne(key);
    },
  };
};

export type ExternalDatabases = ReturnType<typeof externalDatabases>;
