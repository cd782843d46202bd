import fc from 'fast-check';
import { allProjections } from '../../projections';
import type { TableProjection } from '../../src/projection/types';
import { startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';
import { differencesFrom, explain, liveDigest, scratchRebuild } from '../support/promise-rebuild';
import {
  applyAll,
  commandSequence,
  propertySettings,
  PROPERTY_TIMEOUT_MS,
  type Command,
} from '../support/promise-world';
import { expectCaught } from '../support/seed';

/**
 * A fresh seed each run, printed: PROMISE_SEED repeats a failure (PROMISE_RUNS, PROMISE_SCALE run
 * more). The projections are one code for both stores; what the store changes is how the log is read
 * (positions, batches), so PostgreSQL gets fewer runs: `convergence.property` replays its log
 * too, across two nodes. Halved from 20 and 10 (issue 62) once the kill check below showed a
 * projection's bug caught on the first run of every seed tried; `npm run test:deep` runs ten times
 * as many, and each run's fresh seed walks new sequences.
 */
const settingsFor = (kind: string) => propertySettings(kind === 'postgres' ? 6 : 10);

type Stores = Awaited<ReturnType<typeof scratchRebuild>>;

/** One event per transaction, batches that cut commands' events apart, the whole log at once. */
const BATCH_SIZES = [1, 7, 1000] as const;

/**
 * Read models rebuilt from the app's log into scratch DuckDBs, one per batch size, all at once: each
 * is its own in-memory DuckDB reading the same log, so one's DuckDB work overlaps another's
 * JavaScript (built one after another, the process sat idle about half the time). A failed one
 * closes the others.
 */
const rebuildsAtOnce = async (t: TestApp): Promise<Map<number, Stores>> => {
  const settled = await Promise.allSettled(BATCH_SIZES.map((batch) => scratchRebuild(t, batch)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    for (const s of settled) if (s.status === 'fulfilled') await s.value.close();
    throw failed.reason;
  }
  return new Map(
    settled.map((s, i) => [BATCH_SIZES[i]!, (s as PromiseFulfilledResult<Stores>).value] as const),
  );
};

/** The scratch rebuilds: `rebuildsAtOnce`, or the kill check's (with its bug). */
type Rebuilds = (t: TestApp) => Promise<Map<number, Stores>>;

/**
 * The property's check: the commands applied to a fresh app, then its read model against rebuilds
 * (`rebuilds`: the one `npm run replay -- --check` makes, with each batch size, or the kill check's).
 */
const rebuiltEqualsLive = async (
  kind: StoreKind,
  commands: Command[],
  rebuilds: Rebuilds = rebuildsAtOnce,
) => {
  const t: TestApp = await startTestApp(kind);
  try {
    const { transcript, unhealthy } = await applyAll([t], commands);
    if (unhealthy.length)
      throw new Error(
        `commands answered as no refusal should:\n${unhealthy.join('\n')}\n\n${transcript.join('\n')}`,
      );
    await t.running.services.models.idle();
    const live = await liveDigest(t);

    // (a) Rebuilt into a scratch DuckDB with each batch size: one event per transaction, batches
    // that cut commands' events apart, and the whole log at once.
    const scratches = await rebuilds(t);
    try {
      // Each scratch checked on its own DuckDB, all at once; a failure is reported in batch order.
      const checked = await Promise.allSettled(
        [...scratches].map(async ([batch, scratch]) => {
          const { differences } = await differencesFrom(t, live, scratch);
          if (differences.length)
            throw new Error(explain(`rebuilt with batch size ${batch}`, differences, transcript));

          // (b) Idempotent: catching up at the head applies nothing, and a second whole replay
          // over the rebuilt model (what `npm run replay` does) gives the same tables.
          await scratch.projections.catchUp();
          expect((await differencesFrom(t, live, scratch)).differences).toEqual([]);
          if (batch === 7) {
            await scratch.projections.rebuild();
            const again = await differencesFrom(t, live, scratch);
            if (again.differences.length)
              throw new Error(explain('replayed twice with batch size 7', again.differences, transcript));
          }
        }),
      );
      const failed = checked.find((c): c is PromiseRejectedResult => c.status === 'rejected');
      if (failed) throw failed.reason;

      // (b) Replayed over the live model itself, in place: it comes back as it was, so equal to
      // every rebuild (the rows that differ from the whole-log one are named when it does not).
      await t.running.ctx.projections.rebuild();
      const replayed = await liveDigest(t);
      if (replayed.digest !== live.digest || replayed.position !== live.position) {
        const { differences } = await differencesFrom(t, replayed, scratches.get(1000)!);
        throw new Error(explain('the live model replayed in place', differences, transcript));
      }
    } finally {
      for (const scratch of scratches.values()) await scratch.close();
    }
  } finally {
    await t.running.services.models.idle();
    await t.dispose();
  }
};

/**
 * The kill check's bug: the log's mirror (`events`) stamping each row with the time it is applied,
 * not the time its event was recorded (a projection reading the clock). Only the rebuilds are given
 * it (for as long as they are built: the live model, idle meanwhile, reads the same list): the live
 * model, had it run it, applied each event at another moment, so it differs the same.
 */
const rebuildsStampingApplyTime: Rebuilds = async (t) => {
  const projections = allProjections as TableProjection[];
  const at = projections.findIndex((p) => p.table === 'events');
  const mirror = projections[at]!;
  projections[at] = {
    ...mirror,
    apply: (event, rows, lookup) =>
      mirror.apply({ ...event, meta: { ...event.meta, recordedAt: new Date().toISOString() } }, rows, lookup),
  };
  try {
    return await rebuildsAtOnce(t);
  } finally {
    projections[at] = mirror;
  }
};

/**
 * The promise: the event log is the only source of truth, so a read model rebuilt from it, with any
 * batch size, equals the live one table by table and row by row, and replaying again changes
 * nothing. Each run starts a fresh app (its own log and DuckDB), so a failing sequence reproduces
 * on its own and shrinks to the few commands that matter. Beside it, a kill check: a projection
 * that stamps its rows with the time it applies them (not the event's) is caught at the count
 * `npm test` runs.
 */
describe.each(storeKinds)('a read model rebuilt from the log equals the live one (%s)', (kind) => {
  it(
    'given generated command sequences over every capability, when rebuilt with batch sizes 1, 7 and 1000 and replayed again, then every table equals the live one',
    async () => {
      await fc.assert(
        fc.asyncProperty(commandSequence({ maxLength: 20 }), (commands) => rebuiltEqualsLive(kind, commands)),
        settingsFor(kind),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'kill check: a projection stamping its rows with the time it applies them, not the event’s, is caught',
    async () => {
      await expectCaught(
        fc.asyncProperty(commandSequence({ maxLength: 20 }), (commands) =>
          rebuiltEqualsLive(kind, commands, rebuildsStampingApplyTime),
        ),
        settingsFor(kind),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
