// mindledger as it runs in production (info-level access logs to a file), for the HTTP benchmarks.
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
