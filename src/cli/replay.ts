import { allProjections, fileTablesProjection } from '../../projections';
import { openBlobStore } from '../files/blobs';
import { loadConfig } from '../config';
import { openDuck } from '../duckdb/database';
import { openEventLog } from '../eventlog/open';
import { createLogger } from '../logger';
import { ProjectionRunner } from '../projection/runner';
import { systemClock } from '../shared/time';

/** `npm run replay`: drops every projection table and rebuilds it from the log. Run with the service stopped. */
const replay = async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const log = await openEventLog({ url: config.eventStoreUrl, dataDir: config.dataDir, clock: systemClock });
  const duck = await openDuck({ file: config.duckdbFile, allowedDirectory: `${config.dataDir}/files` });
  const blobs = await openBlobStore(
    config.dataDir,
    log.kind === 'postgres' ? config.eventStoreUrl : undefined,
  );
  const runner = new ProjectionRunner(
    duck,
    log,
    allProjections,
    logger,
    { batchSize: config.projectionBatchSize },
    [fileTablesProjection(blobs)],
  );
  await runner.start();
  const { events, ms } = await runner.rebuild();
  logger.info(
    { events, ms, eventsPerSecond: Math.round((events / Math.max(ms, 1)) * 1000) },
    'replay finished',
  );
  runner.stop();
  await blobs.close();
  await log.close();
  await duck.close();
};

replay().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
