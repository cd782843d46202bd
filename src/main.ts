// First: libuv reads UV_THREADPOOL_SIZE when its pool starts (see duckdb/threadpool.ts).
import './duckdb/threadpool';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createApp, type RunningApp } from './app';
import { isLoopback, loadConfig, unsafeBinding, type Config } from './config';
import { answerClientErrors } from './http/clientErrors';
import { keepIdleConnections } from './http/idleConnections';
import { startingAnswers } from './http/starting';
import { createLogger, flushLogger } from './logger';
import type { ProjectionRunner } from './projection/runner';
import { certificateHosts, startMysqlServer } from './mysql/server';
import { startPgServer } from './pgwire/server';
import { selfSignedCertificateIn } from './shared/selfSignedCertificate';
import { sqlDoor, WireLoginLimiter } from './users/sqlDoors';
import { VERSION } from './shared/version';

/**
 * What both SQL doors are given alike: their engine and sign-in (the same users and roles as HTTP,
 * src/users/sqlDoors.ts), where they listen, their bounds and the operator's TLS files.
 */
const doorOptions =
  (config: Config, running: RunningApp, authOn: boolean, limiter: WireLoginLimiter) =>
  (kind: 'mysql' | 'postgres') => {
    const wire = config[kind];
    const door = sqlDoor(running.services.users, running.sql, authOn, kind, limiter);
    return {
      engine: door.engine,
      auth: door.auth,
      host: config.host,
      port: wire.port,
      logger: running.ctx.logger,
      tls: wire.tls
        ? { cert: fs.readFileSync(wire.tls.certFile), key: fs.readFileSync(wire.tls.keyFile) }
        : undefined,
      maxRows: config.sqlRowLimit,
      maxConnections: wire.maxConnections,
      maxPreAuth: wire.preAuth.max,
      maxPreAuthPerAddress: wire.preAuth.perAddress,
      handshakeTimeoutMs: wire.preAuth.timeoutMs,
      maxParams: config.sqlMaxParams,
    };
  };

/** The same SQL engine, statements, sandbox and errors over the MySQL wire protocol (MYSQL_PORT). */
const startMysql = (config: Config, optionsOf: ReturnType<typeof doorOptions>) => {
  if (config.mysql.port === 0) return undefined;
  // src/users/sqlDoors.ts: why caching_sha2_password's full authentication; SELECTs stream from
  // DuckDB through the service's `stream`, which the door requires.
  const options = optionsOf('mysql');
  return startMysqlServer({
    ...options,
    // TLS is always offered (src/mysql/server.ts: why); without the operator's files, a certificate
    // made on first start is kept in DATA_DIR/tls, so clients can pin it across restarts.
    tls:
      options.tls ?? selfSignedCertificateIn(path.join(config.dataDir, 'tls'), certificateHosts(config.host)),
    serverVersion: `8.0.17-mindledger-${VERSION}`,
  });
};

/** The same engine over PostgreSQL's wire protocol (PG_PORT): psql, Grafana, Superset, PostgreSQL drivers. */
const startPostgres = (config: Config, optionsOf: ReturnType<typeof doorOptions>) => {
  if (config.postgres.port === 0) return undefined;
  return startPgServer({
    ...optionsOf('postgres'),
    catalog: config.postgres.catalog,
    versionText: `PostgreSQL 16.0 (mindledger ${VERSION}; MindsDB-compatible SQL)`,
  });
};

/** How long a start that cannot listen may take to exit before its watchdog ends it. */
const START_FAILURE_EXIT_MS = 5000;

const main = async () => {
  const config = loadConfig();
  // No log yet means no admin yet: refused before anything is written.
  const noLogYet =
    config.eventStoreUrl === undefined && !fs.existsSync(path.join(config.dataDir, 'events.sqlite'));
  if (noLogYet && unsafeBinding(config)) {
    console.error(unsafeBinding(config));
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  // The port listens from the start and answers 503 "Starting" (the probes too) until the app takes
  // it over: a long catch-up of the read model is seen by probes, not a refused connection. Not on
  // an address that is refused without sign-in (whether sign-in is on is known once the read
  // model is): that one listens only once the app is built and sign-in checked, as before.
  let starting: ProjectionRunner | undefined;
  let serve: (req: IncomingMessage, res: ServerResponse) => void = startingAnswers(
    () => starting?.position ?? null,
  );
  const server = keepIdleConnections(createServer((req, res) => serve(req, res)));
  // Requests Node's parser refuses (oversized headers, bad chunking) answer problem+json too.
  answerClientErrors(server, logger);
  // A port it cannot listen on (taken, not permitted) ends the start in words rather than as an
  // unhandled 'error': the stores may be opening meanwhile, so the watchdog sees the exit through.
  server.once('error', (err) => {
    logger.fatal({ err, host: config.host, port: config.port }, 'the HTTP port cannot be listened on');
    flushLogger(logger);
    armWatchdog(START_FAILURE_EXIT_MS);
    process.exit(1);
  });
  const listening = new Promise<void>((resolve) => server.once('listening', resolve));
  const listen = () => server.listen(config.port, config.host);
  const listenEarly = unsafeBinding(config) === null;
  if (listenEarly) {
    listen();
    void listening.then(() =>
      logger.info(
        { url: `http://${config.host}:${config.port}` },
        'starting: the HTTP port answers 503 until the read model has caught up with the log',
      ),
    );
  }
  const running = await createApp(config, { logger, starting: (projections) => (starting = projections) });
  // An admin made with `npm run user -- add` turns authentication on as AUTH_USERNAME does.
  const authOn = await running.services.users.enabled();
  const refusal = authOn ? null : unsafeBinding(config);
  if (refusal) {
    console.error(refusal);
    await running.close();
    process.exit(1);
  }
  if (authOn)
    logger.info(
      { host: config.host },
      'authentication is ON: sign in with POST /api/login or a bearer token',
    );
  else {
    logger.warn(
      { host: config.host },
      'AUTHENTICATION IS OFF: anyone who can reach this port can read, change and delete everything; only requests addressed to a loopback name (127.0.0.1, localhost, [::1]) or ALLOWED_HOSTS are served (DNS rebinding). Turn it on with AUTH_USERNAME and AUTH_PASSWORD.',
    );
    logger.info(config.outbound.localFirstNotice);
    if (!isLoopback(config.host))
      logger.warn(
        { host: config.host },
        'serving WITHOUT authentication on a non-loopback address (ALLOW_UNAUTHENTICATED)',
      );
  }
  serve = running.app;
  if (!listenEarly) listen();
  await listening;
  logger.info(
    {
      url: `http://${config.host}:${config.port}`,
      eventStore: running.ctx.log.kind,
      dataDir: config.dataDir,
    },
    'mindledger listening',
  );
  // Failed logins over MySQL and PostgreSQL count together, per user name (LOGIN_RATE_LIMIT per window).
  const wireLogins = new WireLoginLimiter({
    limit: config.auth.loginRateLimit,
    windowMs: config.auth.loginRateWindowMs,
  });
  // Each door logs its own 'listening' line (host, port, TLS) once it listens.
  const optionsOf = doorOptions(config, running, authOn, wireLogins);
  const mysql = await startMysql(config, optionsOf);
  const postgres = await startPostgres(config, optionsOf);

  // After a signal: in-flight requests have SHUTDOWN_GRACE_MS to finish; then DuckDB work still
  // running is interrupted (its clients get an error) and the stores close. DuckDB's destructor
  // waits for running work, so work it does not stop would hold `process.exit` (and the database
  // file's lock) for good: the process was seen at 99% CPU 11 minutes after SIGTERM, its forced
  // `process.exit` stuck in that destructor. So a watchdog in another process ends this one with
  // SIGKILL CLOSE_BUDGET_MS after the grace if it is still there (no thread of this process can
  // be relied on then); committed DuckDB and SQLite data survive it (write-ahead logs).
  const CLOSE_BUDGET_MS = 5000;
  let closing = false;
  const shutdown = (signal: string, exitCode = 0) => {
    if (closing) return;
    closing = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: finishing in-flight requests');
    armWatchdog(config.shutdownGraceMs + CLOSE_BUDGET_MS);
    const close = () =>
      running.close().then(
        () => {
          flushLogger(logger);
          process.exit(exitCode);
        },
        (err: unknown) => {
          logger.error({ err }, 'error while closing stores');
          flushLogger(logger);
          process.exit(1);
        },
      );
    // Stop accepting; the stores close once the last in-flight request (HTTP, MySQL, PostgreSQL) has answered.
    const doorsClosed = Promise.all([
      mysql?.close(config.shutdownGraceMs),
      postgres?.close(config.shutdownGraceMs),
    ]);
    server.close(() => void doorsClosed.then(close, close));
    server.closeIdleConnections();
    setTimeout(() => {
      logger.warn('grace period over: interrupting running queries');
      running.ctx.duck.stop();
      // Interrupted queries answer at once; connections still open a moment later are cut.
      setTimeout(() => server.closeAllConnections(), 500).unref();
    }, config.shutdownGraceMs).unref();
  };
  // DuckDB invalidates its database after a FATAL error (a rollback that met its memory limit was
  // seen): every read and write fails from then on. The file holds every committed batch (its
  // write-ahead log), so a new process reopens it and catches up from the log; this one ends,
  // with EX_SOFTWARE, for its supervisor (docker compose's `restart: unless-stopped`) to start it.
  running.ctx.duck.onInvalidated((reason) => {
    logger.fatal(
      { reason: reason.split('\n')[0] },
      'DuckDB invalidated the read model: exiting, so that a restart reopens it from its file (the log is intact)',
    );
    shutdown('DuckDB invalidated the read model', 70);
  });
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
};

/**
 * A child process that SIGKILLs this one after `ms`, unless this one is gone by then: it checks
 * that it is still this process's child (an ended parent's pid could be reused).
 */
const armWatchdog = (ms: number) => {
  const pid = process.pid;
  const child = spawn(
    process.execPath,
    ['-e', `setTimeout(() => { if (process.ppid === ${pid}) process.kill(${pid}, 'SIGKILL'); }, ${ms});`],
    { stdio: 'ignore' },
  );
  child.on('error', () => undefined);
  child.unref();
};

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
