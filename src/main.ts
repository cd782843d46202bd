import type { Server } from 'node:http';
import { createApp } from './app';
import { loadConfig } from './config';
import { flushLogger } from './logger';

const main = async () => {
  const config = loadConfig();
  const running = await createApp(config);
  const { logger } = running.ctx;
  const server: Server = running.app.listen(config.port, config.host, () => {
    logger.info(
      {
        url: `http://${config.host}:${config.port}`,
        eventStore: running.ctx.log.kind,
        dataDir: config.dataDir,
      },
      'mindledger listening',
    );
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // Stop accepting, let in-flight requests finish, then close the stores.
    server.close(() => {
      void running.close().then(
        () => {
          flushLogger(logger);
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'error while closing stores');
          process.exit(1);
        },
      );
    });
    server.closeIdleConnections();
    setTimeout(() => {
      logger.warn('forced exit after 10 s');
      process.exit(1);
    }, 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
};

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
