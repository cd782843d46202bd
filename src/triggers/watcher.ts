import crypto from 'node:crypto';
import os from 'node:os';
import type { TriggerOwner } from '../../events';
import { settled, type AppContext } from '../context';
import type { ProjectAggregate } from '../shared/projectState';
import { unlessClaimLost } from '../shared/errors';
import { statementTexts } from '../shared/sqlStatements';
import { withRequest } from '../shared/requestContext';
import type { OwnerRights } from '../shared/ownerRights';
import { decideTriggerFiring, type TriggerFiringCommand } from './decider';
import { allTriggerRows, type TriggerRow } from './projection';
import { dequeueStatement, queueQuery, withDelta } from './source';
import type { TriggerSource } from './service';
import { triggerFiringsAggregate, triggerFiringsStream } from './state';

/** The SQL service as a firing needs it: one statement, in the trigger's project; an error's text, or null. */
type TriggerSqlPort = {
  execute(sql: string, project: string): Promise<string | null>;
  /** The trigger's owner's rights at this firing (src/users/owners.ts). */
  ownerRights(owner: TriggerOwner): Promise<OwnerRights>;
  /** A project's state as its stream holds it, folded by the composition root. */
  project(name: string): Promise<ProjectAggregate>;
};

/** Rows one firing takes at most (the rest wait for the next). */
const ROWS_PER_FIRING = 1000;

const jsonValue = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

const recordStep = async (ctx: AppContext, triggerId: bigint, command: TriggerFiringCommand) =>
  (
    await unlessClaimLost(
      ctx.commands.run(triggerFiringsStream(triggerId), triggerFiringsAggregate, (s) =>
        decideTriggerFiring(command, s, triggerId),
      ),
    )
  )?.lastPosition ?? null;

/** What a firing needs of its watcher. */
type FiringDeps = {
  readonly ctx: AppContext;
  readonly source: () => TriggerSource;
  readonly sql: TriggerSqlPort;
  readonly node: string;
};

/**
 * Runs a claimed firing's statements over the rows, until one fails; records how it ended. Refused
 * rights or a trigger gone since fail it unrun.
 */
const runFiring = async (
  { ctx, sql }: FiringDeps,
  row: TriggerRow,
  claimId: string,
  rights: OwnerRights,
  trigger: { query: string } | undefined,
  rows: unknown[][],
) => {
  const fail = (error: string) =>
    recordStep(ctx, row.ID, { type: 'FailFiring', data: { claimId, error }, metadata: { now: ctx.clock() } });
  if ('refused' in rights) return fail(rights.refused);
  if (trigger === undefined) return fail(`The trigger ${row.NAME} no longer exists`);
  const delta = rows.map((r) => JSON.parse(String(r[1])) as Record<string, unknown>);
  const statements = statementTexts(trigger.query);
  for (const statement of statements) {
    // A statement the rows cannot be written into fails the firing, as one that fails to run.
    const failed = await Promise.resolve()
      .then(() => sql.execute(withDelta(statement, delta), row.PROJECT))
      .catch((e: unknown) => String(e));
    if (failed !== null) return fail(rights.demoted === null ? failed : `${rights.demoted}: ${failed}`);
  }
  return recordStep(ctx, row.ID, {
    type: 'FinishFiring',
    data: { claimId, statements: statements.length },
    metadata: { now: ctx.clock() },
  });
};

/** Claims the rows and runs the statements, as the trigger: its actor, its creator's rights. */
const fireTrigger = async (deps: FiringDeps, row: TriggerRow, schema: string, rows: unknown[][]) => {
  const { ctx, sql, node } = deps;
  const upTo = Number(rows[rows.length - 1]![0]);
  const claimId = crypto.randomUUID();
  // The owner as they are now: gone, or their token revoked or expired, the firing fails unrun.
  const rights = await sql.ownerRights(jsonValue<TriggerOwner>(row.OWNER));
  const principal = 'refused' in rights ? undefined : rights.principal;
  // The statements as the log holds them: the read model's copy has its secrets masked.
  const trigger = (await sql.project(row.PROJECT)).triggers.get(row.ID);
  const last = await withRequest(
    {
      requestId: `trigger-${row.ID}-${upTo}`,
      interface: 'trigger',
      actor: { kind: 'system', id: `trigger:${row.ID}` },
      ...(principal ? { principal } : {}),
    },
    async () => {
      const claimed = await recordStep(ctx, row.ID, {
        type: 'ClaimFiring',
        data: {
          triggerId: row.ID,
          projectId: Number(row.PROJECT_ID),
          claimId,
          upTo,
          rows: rows.length,
          node,
        },
        metadata: { now: ctx.clock() },
      });
      if (claimed === null) return null;
      return (await runFiring(deps, row, claimId, rights, trigger, rows)) ?? claimed;
    },
  );
  if (last === null) return;
  // Fired: the rows leave the queue (a process that dies before this leaves them claimed, never run twice).
  await deps.source().run(row.DATABASE, [dequeueStatement(schema)], [[row.KEY, upTo]]);
  await settled(ctx, last);
};

/**
 * Watches every trigger's queue in its source and fires it. Every process runs one; a firing is
 * claimed through the log (decider.ts), so of two processes that see the same new rows one runs the
 * statements. Rows are removed from the queue once fired.
 */
export const triggerWatcher = (
  ctx: AppContext,
  source: () => TriggerSource,
  sql: TriggerSqlPort,
  options: { pollMs: number },
  node = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`,
) => {
  const stopped = new AbortController();
  const working = new Set<bigint>();
  let timer: NodeJS.Timeout | undefined;

  const firing: FiringDeps = { ctx, source, sql, node };

  /** Each trigger's poll (and firing) under way: what `stop` waits for. */
  const inFlight = new Set<Promise<void>>();

  /**
   * Starts a poll of every trigger's queue not being polled already, and answers them without
   * waiting for them: a source that hangs holds its own trigger (until its driver's time limit),
   * never the others', and its ticks do not pile up behind it.
   */
  const launch = async () => {
    if (stopped.signal.aborted) return [];
    const runs: Promise<void>[] = [];
    for (const row of await allTriggerRows(ctx.duck)) {
      if (working.has(row.ID)) continue;
      working.add(row.ID);
      runs.push(
        (async () => {
          // The queue is in the integration's schema (as it is now: the trigger does not record it).
          const integration = await source().integration(row.DATABASE);
          if (!integration) throw new Error(`${row.DATABASE} is not an external database`);
          const rows = await source().rows(row.DATABASE, queueQuery(integration.schema, ROWS_PER_FIRING), [
            row.KEY,
            Number(row.UP_TO),
          ]);
          if (rows.length > 0) await fireTrigger(firing, row, integration.schema, rows);
        })()
          .catch((error: unknown) => {
            if (!stopped.signal.aborted)
              ctx.logger.warn({ err: error, trigger: String(row.ID) }, 'trigger not fired');
          })
          .finally(() => working.delete(row.ID)),
      );
    }
    for (const run of runs) {
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
    }
    return runs;
  };

  /** Looks at every trigger's queue now and fires those with new rows; resolves when done. */
  const tick = async () => {
    await Promise.all(await launch());
  };

  let ticking: Promise<void> | null = null;
  return {
    node,
    tick,
    start: () => {
      if (options.pollMs <= 0) return;
      timer = setInterval(() => {
        if (ticking || stopped.signal.aborted) return;
        // A scan that fails (the source is down, the service is stopping) is logged; the next one retries.
        ticking = launch()
          .then(() => undefined)
          .catch((error: unknown) => {
            if (!stopped.signal.aborted) ctx.logger.warn({ err: error }, 'trigger scan failed');
          })
          .finally(() => {
            ticking = null;
          });
      }, options.pollMs);
      timer.unref();
    },
    stop: async () => {
      stopped.abort();
      if (timer) clearInterval(timer);
      await ticking;
      await Promise.allSettled([...inFlight]);
    },
  };
};

export type TriggerWatcher = ReturnType<typeof triggerWatcher>;
