import type { Express } from 'express';
import type { Logger } from 'pino';
import { configureEventLimits } from '../events';
import type { Config } from './config';
import { assertReadModelWritable, ownWritesGate, type AppContext } from './context';
import { externalDatabases } from './databases/pools';
import { commandRunner } from './eventlog/commands';
import type { Api } from './http/api';
import type { ReadCeiling } from './integrations/drivers';
import { createLogger } from './logger';
import { jobScheduler, type JobScheduler } from './jobs/scheduler';
import { triggerWatcher, type TriggerWatcher } from './triggers/watcher';
import { readCache, tableReadCaches } from './shared/readCache';
import type { SqlService } from './sql/service';
import { openStores } from './stores';
import { projectAggregate } from './projects/aggregate';
import { projectStream } from './shared/projectState';
import { holdsSealedSecrets } from './ledger/sealedLog';
import { secretKeeper } from './ledger/secretKeeper';
import { readingAsOfPosition, withAsOfReads } from './projection/asOfReads';
import type { ProjectionRunner } from './projection/runner';
import { cacheAfterOwnWrites, readsAfterOwnWrites, tableCachesAfterOwnWrites } from './projection/ownWrites';
import { systemClock, type Clock } from './shared/time';
import { withRequest } from './shared/requestContext';
import { WriteAccepted } from './shared/errors';
import { heapKeeper } from './shared/heapKeeper';
import { startChatbotWork } from './wiring/chatbots';
import { buildHttpApp } from './wiring/http';
import { operatorView } from './wiring/operations';
import { buildServices, type Services } from './wiring/services';

export type { Services } from './wiring/services';

export type RunningApp = {
  readonly ctx: AppContext;
  readonly services: Services;
  readonly sql: SqlService;
  /** Fires due jobs (every process runs one; a run is claimed through the log). */
  readonly jobs: JobScheduler;
  /** Fires triggers whose source tables gained rows (every process runs one; a firing is claimed through the log). */
  readonly triggers: TriggerWatcher;
  readonly app: Express;
  readonly api: Api;
  close(): Promise<void>;
};

/** Opens the log and the read model, catches the projections up, and wires the HTTP app. */
export const createApp = async (
  config: Config,
  options: {
    clock?: Clock;
    logger?: Logger;
    /** Given the read model's runner once the stores are open, before it catches up (src/main.ts). */
    starting?: (projections: ProjectionRunner) => void;
    /** What one read from an external database may bring (FETCH_LIMIT rows unless given: specs shrink it). */
    externalReads?: ReadCeiling;
  } = {},
): Promise<RunningApp> => {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  configureEventLimits({ maxJsonDepth: config.maxJsonDepth, maxEventBytes: config.maxEventBytes });
  const stores = await openStores(config, logger, clock, { poll: true });
  const { log, duck, blobs, projections, vault } = stores;
  options.starting?.(projections);
  const opened: { externals?: { closeAll(): Promise<void> } } = {};
  // A start that fails part way closes what it opened (pools, the log's LISTEN connection), so
  // nothing of it reconnects on a timer after its caller gave up.
  const orClose = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      await opened.externals?.closeAll().catch(() => undefined);
      await stores.close().catch(() => undefined);
      throw error;
    }
  };
  // PROJECTION_WAIT_MS bounds a client's wait for its write (202 past it), not a start's: the start's
  // own writes wait until applied, then run again (each checks the state first, so once is once).
  const untilApplied = async (write: () => Promise<unknown>) => {
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!(error instanceof WriteAccepted)) throw error;
        // Not Infinity: a timer given Infinity fires after 1 ms.
        await projections.waitFor(error.position, 2 ** 31 - 1);
      }
    }
  };
  await orClose(() => projections.startServing());
  const commands = commandRunner(log, {
    assertWritable: () => assertReadModelWritable(projections),
    // Other processes write too: the tail keeps cached stream states current instead of a read per write.
    trustCachedStreams: !log.soleWriter,
  });
  // An event holding sealed secrets is re-read unsealed, not evolved from the tail's stored copy.
  projections.onApplied((events) => commands.observe(events, holdsSealedSecrets));
  // Every read waits first for the writes this process answered ahead of its read model (answeredAhead).
  const ownWrites = ownWritesGate(projections, config.readMinPositionWaitMs);
  const tableCaches = tableReadCaches((table) => projections.tableVersion(table), {
    holdsConnection: duck.holdsReader,
    bypass: () => readingAsOfPosition() !== undefined,
  });
  const ctx: AppContext = {
    config,
    secrets: secretKeeper({ commands, log, clock, logger }, vault),
    log,
    // Reads inside a GET …?as_of= see the resource tables as of that position (http/asOf.ts).
    duck: withAsOfReads(readsAfterOwnWrites(duck, ownWrites)),
    projections,
    commands,
    cached: cacheAfterOwnWrites(
      readCache(() => projections.version, {
        holdsConnection: duck.holdsReader,
        bypass: () => readingAsOfPosition() !== undefined,
      }),
      ownWrites,
      'all',
    ),
    cachedOf: tableCachesAfterOwnWrites(tableCaches, ownWrites),
    ownWrites,
    clock,
    logger,
  };
  const externals = externalDatabases(ctx, {
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.sqlTimeoutMs,
    ...(options.externalReads ? { ceiling: options.externalReads } : {}),
  });
  opened.externals = externals;
  // Metrics and readiness read the services' work in flight, the runners and the SQL service's reports.
  const operator = operatorView(ctx, {
    trainings: () => services.models.trainingsInFlight(),
    agentRuns: () => services.agentRuns.inFlight(),
  });
  const { services, sql, triggerSource } = buildServices(ctx, blobs, externals, operator.sql);
  // Local-first (OUTBOUND_LOCAL_FIRST): the outbound policy follows sign-in as it changes.
  config.outbound.followSignIn(() => services.users.enabled());
  // What the service does on its own at start is recorded as the system's doing.
  await orClose(() =>
    withRequest(
      { requestId: 'startup', interface: 'system', actor: { kind: 'system', id: 'startup' } },
      async () => {
        await untilApplied(() => services.projects.ensureDefault());
        const bootstrap = config.auth.bootstrap;
        if (bootstrap)
          await untilApplied(() => services.users.bootstrap(bootstrap.username, bootstrap.password));
      },
    ),
  );
  await orClose(() => sql.install());
  // With the read model stopped at an event it cannot apply, this write waits for the next start.
  await orClose(() =>
    services.models.recoverInterruptedTrainings().catch((err: unknown) => {
      if (!projections.failure) throw err;
      logger.error({ err }, 'interrupted trainings not marked failed: the read model is stopped');
    }),
  );
  // Every process answers chatbots' messages (and long-polls Telegram), when configured to.
  const { processor, pollers } = startChatbotWork(ctx, services);
  // Every process fires due jobs; each statement runs through the SQL service, in the job's project.
  const projectState = async (name: string) =>
    (await ctx.commands.load(projectStream(name), projectAggregate)).state;
  const jobs = jobScheduler(
    ctx,
    {
      execute: async (query, project) => {
        const answer = await sql.execute(query, { db: project }, {});
        if (answer.type === 'error') return { outcome: 'error', rows: null, error: answer.error_message };
        if (answer.type === 'table') return { outcome: 'rows', rows: answer.data.length, error: null };
        return { outcome: 'ok', rows: answer.affected_rows ?? null, error: null };
      },
      ownerRights: (owner) => services.users.ownerRights(owner, 'job'),
      project: projectState,
    },
    config.jobs,
  );
  jobs.start();
  const triggers = triggerWatcher(
    ctx,
    () => triggerSource,
    {
      execute: async (query, project) => {
        const answer = await sql.execute(query, { db: project }, {});
        return answer.type === 'error' ? answer.error_message : null;
      },
      ownerRights: (owner) => services.users.ownerRights(owner, 'trigger'),
      project: projectState,
    },
    config.triggers,
  );
  triggers.start();
  // The ledger signs checkpoints of the log's hash tree as the log grows (and at a clean stop).
  withRequest({ requestId: 'ledger', interface: 'system', actor: { kind: 'system', id: 'ledger' } }, () =>
    services.ledger.start(),
  );
  const {
    app,
    api,
    close: closeHttp,
  } = buildHttpApp(
    ctx,
    services,
    sql,
    {
      digest: stores.digest,
      version: () => projections.version,
      failure: () => projections.failure,
      rebuildReason: () => projections.rebuildReason,
      skippedEvents: () => projections.skippedEvents,
    },
    operator,
  );
  // Heavy work over (a training's rows, a large answer), an idle process gives its heap back.
  const heap = heapKeeper({ everyMs: 5_000, logger });
  return {
    ctx,
    services,
    sql,
    jobs,
    triggers,
    app,
    api,
    close: async () => {
      heap.stop();
      // Let trainings this process started finish recording (bounded), then stop. The bound's timer
      // is unref'd and cleared: left running, it kept a process that had closed everything alive
      // for 10 s (and, as any timer, the async context it was made in reachable).
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        services.models.idle(),
        new Promise((r) => (bound = setTimeout(r, 10_000).unref())),
      ]);
      clearTimeout(bound);
      closeHttp();
      await Promise.all([processor.stop(), pollers.stop(), jobs.stop(), triggers.stop()]);
      await services.ledger.stop();
      await services.models.close();
      await externals.closeAll();
      await stores.close();
    },
  };
};
