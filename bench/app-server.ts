// mindledger as it runs in production (info-level access logs to a file), for the HTTP benchmarks.
// First, as in main.ts: libuv sizes its thread pool (the SQL readers' threads) when it first starts.
// Without it the benchmarks measured libuv's 4 threads and 2 SQL readers, not production's 13 and 7.
import '../src/duckdb/threadpool';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';

const main = async () => {
  const config = loadConfig();
  const logger = createLogger(process.env.BENCH_LOG_LEVEL ?? 'info', `${config.dataDir}/bench.log`);
  const running = await createApp(config, { logger });
  const server = running.app.listen(config.port, '127.0.0.1', () => process.send?.('ready'));
  process.on('SIGTERM', () => server.close(() => void running.close().then(() => process.exit(0))));
};
void main();
