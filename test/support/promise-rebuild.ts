import pino from 'pino';
import { FILES_SCHEMA } from '../../src/shared/names';
import { KB_SCHEMA } from '../../src/engines/search/layout';
import { compareReadModels, type TableDifference } from '../../src/projection/compare';
import { digestReadModel, type ReadModelDigest } from '../../src/projection/digest';
import { CHECKPOINT_TABLE } from '../../src/projection/runner';
import { systemClock } from '../../src/shared/time';
import { openStores } from '../../src/stores';
import type { TestApp } from './app';

type Stores = Awaited<ReturnType<typeof openStores>>;

const digestOptions = {
  checkpointTable: CHECKPOINT_TABLE,
  schemas: ['main', FILES_SCHEMA, KB_SCHEMA],
} as const;

/** The digest of a running app's read model, read on one of its pooled connections. */
export const liveDigest = (t: TestApp) =>
  t.running.ctx.duck.withReader((c) => digestReadModel(c, digestOptions));

/**
 * A second read model rebuilt from the app's log into a scratch in-memory DuckDB, with its own
 * batch size: what `npm run replay -- --check` builds (same `openStores`, same projections, same
 * blobs directory), opened beside the running app so that the live model stays as it is.
 */
export const scratchRebuild = async (t: TestApp, batchSize: number): Promise<Stores> => {
  const scratch = await openStores(
    { ...t.config, duckdbFile: ':memory:', projectionBatchSize: batchSize, duckdbReaders: 2 },
    pino({ level: 'silent' }),
    systemClock,
    { poll: false },
  );
  try {
    await scratch.projections.start();
  } catch (error) {
    await scratch.close();
    throw error;
  }
  return scratch;
};

/** Tables that differ between the live model and a rebuilt one, with the rows only one side has. */
export const differencesFrom = async (
  t: TestApp,
  live: ReadModelDigest,
  scratch: Stores,
): Promise<{ rebuilt: ReadModelDigest; differences: TableDifference[] }> => {
  const rebuilt = await scratch.digest();
  if (rebuilt.digest === live.digest && rebuilt.position === live.position)
    return { rebuilt, differences: [] };
  const differences = await t.running.ctx.duck.withReader((lc) =>
    scratch.duck.withReader((rc) =>
      compareReadModels({ digest: live, connection: lc }, { digest: rebuilt, connection: rc }),
    ),
  );
  if (rebuilt.position !== live.position)
    differences.unshift({
      table: `(checkpoint: live at ${live.position}, rebuilt at ${rebuilt.position})`,
      live: null,
      rebuilt: null,
      onlyLive: [],
      onlyRebuilt: [],
    });
  return { rebuilt, differences };
};

/** The differences between the live read model and one rebuilt from the log in batches of `batchSize`. */
export const rebuildDifferences = async (t: TestApp, batchSize: number) => {
  const live = await liveDigest(t);
  const scratch = await scratchRebuild(t, batchSize);
  try {
    return (await differencesFrom(t, live, scratch)).differences;
  } finally {
    await scratch.close();
  }
};

/** The failure message a person needs: which tables, which rows, and the commands that led there. */
export const explain = (
  what: string,
  differences: readonly TableDifference[],
  transcript: readonly string[],
) =>
  [
    `${what}: ${differences.length} table(s) differ`,
    ...differences.map(
      (d) =>
        `  ${d.table}: live ${d.live ? `${d.live.rows} rows` : '-'}, rebuilt ${d.rebuilt ? `${d.rebuilt.rows} rows` : '-'}\n` +
        d.onlyLive.map((r) => `    only live:    ${r}\n`).join('') +
        d.onlyRebuilt.map((r) => `    only rebuilt: ${r}\n`).join(''),
    ),
    ...(transcript.length ? ['commands:', ...transcript.map((l) => `  ${l}`)] : []),
  ].join('\n');

type Status = { position: string; digest: string; tables: { table: string; rows: number; hash: string }[] };
export const statusOf = async (t: TestApp) =>
  (await t.http.get('/api/status').expect(200)).body.read_model as Status & { failed: unknown };

/**
 * Waits until every app's read model includes every event of the log (each position applied: on
 * PostgreSQL the tail reads in commit order, so the last event read need not be the highest
 * position), then answers each one's status. Throws when one is stopped at an event it cannot
 * apply or does not get there.
 */
export const waitForHead = async (apps: readonly TestApp[], timeoutMs = 15_000) => {
  const log = apps[0]!.running.ctx.log;
  const head = (await log.head()).position.toString();
  const positions = (await log.readPage({ after: 0n, limit: 1_000_000 })).map((e) => e.meta.position);
  const deadline = Date.now() + timeoutMs;
  for (const [i, app] of apps.entries()) {
    const failed = (await statusOf(app)).failed;
    if (failed) throw new Error(`a read model is stopped: ${JSON.stringify(failed)}`);
    for (const position of positions)
      await app.running.ctx.projections
        .waitFor(position, Math.max(1, deadline - Date.now()))
        .catch((error: unknown) => {
          throw new Error(
            `read model ${i} did not include event ${position} (log head ${head}) in ${timeoutMs} ms: ${String(error)}`,
          );
        });
  }
  const statuses = await Promise.all(apps.map(statusOf));
  const failed = statuses.find((s) => s.failed !== null);
  if (failed) throw new Error(`a read model is stopped: ${JSON.stringify(failed.failed)}`);
  return { head, statuses };
};
