import { loadConfig } from '../config';
import { createLogger, flushLogger } from '../logger';
import { systemClock } from '../shared/time';
import { openStores } from '../stores';

/** `npm run replay`: drops every projection table and rebuilds it from the log. Run with the service stopped. */
const replay = async () => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const stores = await openStores(config, logger, systemClock, { poll: false });
  await stores.projections.start();
  const { events, ms } = await stores.projections.rebuild();
  logger.info(
    { events, ms, eventsPerSecond: Math.round((events / Math.max(ms, 1)) * 1000) },
    'replay finished',
  );
  await stores.close();
  flushLogger(logger);
};

replay().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
