import { loadConfig } from '../config';
import { createLogger, flushLogger } from '../logger';
import { compareReadModels } from '../projection/compare';
import type { ProjectionRunner } from '../projection/runner';
import { systemClock } from '../shared/time';
import { openStores } from '../stores';
import { progressOf } from './progress';

/** The service holds DATA_DIR's read model: said in words, not as a stack. */
class ServiceRunning extends Error {}

/** How far the runner's catch-up has come: a bar on a terminal, else a line every 2 s and a last one. */
const progressOfRunner = (runner: ProjectionRunner, total: number, label: string) =>
  progressOf((listener) => runner.onApplied(listener), total, label, { everyMs: 2_000 });

const slowestFirst = (runner: ProjectionRunner) => [...runner.timings()].sort((a, b) => b.ms - a.ms);

/** The slowest tables first: uploaded files usually dominate a rebuild, and the output says so. */
const printTimings = (runner: ProjectionRunner) => {
  const rows = slowestFirst(runner);
  const total = rows.reduce((s, r) => s + r.ms, 0);
  process.stderr.write('time per table:\n');
  for (const r of rows.slice(0, 20))
    process.stderr.write(
      `  ${r.table.padEnd(40)} ${String(r.ms).padStart(8)} ms  ${total ? Math.round((r.ms / total) * 100) : 0}%\n`,
    );
};

/**
 * `npm run replay`: drops every projection table and rebuilds it from the log.
 * `npm run replay -- --check`: rebuilds into a scratch database instead and reports every table
 * that differs from the live one (exit code 1 when one does).
 * `npm run replay -- --resume`: goes on with a replay that was interrupted, from the last batch it
 * committed (each batch commits with its checkpoint), rather than dropping the tables again.
 * Run each with the service stopped.
 */
const main = async () => {
  const check = process.argv.includes('--check');
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const live = await openStores(config, logger, systemClock, { poll: false }).catch((err: unknown) => {
    // DuckDB's own words name a lock and a process id; the operator needs what to do.
    if (/could not set lock|conflicting lock/i.test((err as Error).message))
      throw new ServiceRunning(
        `The service is running on this DATA_DIR (its read model is locked by it): stop it first, then run npm run replay${check ? ' -- --check' : ''} again (while it runs, GET /api/status says whether its read model matches the log).`,
      );
    throw err;
  });
  try {
    const head = await live.log.head();
    if (process.argv.includes('--resume')) {
      const started = Date.now();
      await live.projections.start((behind) => progressOfRunner(live.projections, behind, 'resume'));
      logger.info(
        { ms: Date.now() - started, position: String(live.projections.position) },
        'replay resumed and finished',
      );
      return 0;
    }
    if (!check) {
      // No start() first: on a new or stale read model it would replay the log once before the
      // rebuild replays it again (the rebuild drops and makes the tables itself).
      const stop = progressOfRunner(live.projections, head.events, 'replay');
      const { events, ms } = await live.projections.rebuild().finally(stop);
      printTimings(live.projections);
      // The JSON log gets the slowest tables too, where log collectors look (stderr's table is for people).
      logger.info(
        {
          events,
          ms,
          eventsPerSecond: Math.round((events / Math.max(ms, 1)) * 1000),
          tables: slowestFirst(live.projections).slice(0, 20),
        },
        'replay finished',
      );
      return 0;
    }
    // The live model first catches up with the log, so both sides describe the same position.
    await live.projections.start();
    const scratch = await openStores({ ...config, duckdbFile: ':memory:' }, logger, systemClock, {
      poll: false,
    });
    try {
      const stop = progressOfRunner(scratch.projections, head.events, 'rebuild');
      await scratch.projections.start().finally(stop);
      printTimings(scratch.projections);
      const liveDigest = await live.digest();
      const rebuiltDigest = await scratch.digest();
      const differences = await live.duck.withReader((lc) =>
        scratch.duck.withReader((rc) =>
          compareReadModels(
            { digest: liveDigest, connection: lc },
            { digest: rebuiltDigest, connection: rc },
          ),
        ),
      );
      const out = {
        position: liveDigest.position,
        rebuiltPosition: rebuiltDigest.position,
        tables: liveDigest.tables.length,
        liveDigest: liveDigest.digest,
        rebuiltDigest: rebuiltDigest.digest,
        differences,
      };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      process.stderr.write(
        differences.length === 0
          ? `replay check: the live read model equals a rebuild from the log (${liveDigest.tables.length} tables at position ${liveDigest.position})\n`
          : `replay check: ${differences.length} table(s) differ from a rebuild: ${differences.map((d) => d.table).join(', ')}\n`,
      );
      return differences.length === 0 ? 0 : 1;
    } finally {
      await scratch.close();
    }
  } finally {
    await live.close();
    flushLogger(logger);
  }
};

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ServiceRunning) process.stderr.write(`${err.message}\n`);
    else console.error(err);
    process.exit(2);
  },
);
