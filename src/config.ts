import os from 'node:os';
import path from 'node:path';
import { parseHostAllowList, type HostPolicy } from './integrations/hostPolicy';
import { envSchema } from './config/environment';
import type { Config } from './config/settings';

/*
 * The service's configuration, read once at start from the environment. Everybody imports this
 * module; its parts: config/environment.ts (the variables, their bounds and defaults),
 * config/settings.ts (the Config type they become), this file (the parsing, and the rules between
 * variables), config/binding.ts (whether the address may be served without authentication).
 */

export type { Config } from './config/settings';
export { isLoopback, unsafeBinding } from './config/binding';

/**
 * DuckDB's memory_limit from DUCKDB_MEMORY_LIMIT: a size as is, a percentage of the memory this
 * process may use (its cgroup limit when it has one, as in a container, else the machine's).
 */
const memoryLimit = (value: string) => {
  const share = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
  if (!share) return value.trim();
  const constrained = process.constrainedMemory();
  const available = constrained > 0 ? Math.min(constrained, os.totalmem()) : os.totalmem();
  const mib = Math.max(64, Math.floor((available * Number(share[1])) / 100 / (1024 * 1024)));
  return `${mib}MiB`;
};

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${detail}`);
  }
  const e = parsed.data;
  if (Boolean(e.MYSQL_TLS_CERT) !== Boolean(e.MYSQL_TLS_KEY))
    throw new Error(
      'Invalid configuration: MYSQL_TLS_CERT and MYSQL_TLS_KEY go together (both files, or neither)',
    );
  if (Boolean(e.PG_TLS_CERT) !== Boolean(e.PG_TLS_KEY))
    throw new Error('Invalid configuration: PG_TLS_CERT and PG_TLS_KEY go together (both files, or neither)');
  let dbHosts: HostPolicy;
  try {
    dbHosts = parseHostAllowList(e.DB_HOST_ALLOWLIST);
  } catch (error) {
    throw new Error(`Invalid configuration: ${(error as Error).message}`);
  }
  if (Boolean(e.AUTH_USERNAME) !== Boolean(e.AUTH_PASSWORD))
    throw new Error('Invalid configuration: AUTH_USERNAME and AUTH_PASSWORD go together (both, or neither)');
  const list = (value: string | undefined) =>
    (value ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  const dataDir = path.resolve(e.DATA_DIR);
  const shared = e.EVENT_STORE_URL?.startsWith('postgres');
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    eventStoreUrl: e.EVENT_STORE_URL || undefined,
    duckdbFile: e.DUCKDB_FILE ?? path.join(dataDir, 'projections.duckdb'),
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    // Only a shared log has writers in other processes to poll for.
    projectionPollMs: e.PROJECTION_POLL_MS ?? (shared ? 200 : 0),
    projectionListen: e.PROJECTION_LISTEN === 'true' || e.PROJECTION_LISTEN === '1',
    projectionBatchSize: e.PROJECTION_BATCH_SIZE,
    projectionBatchPauseMs: e.PROJECTION_BATCH_PAUSE_MS,
    projectionWaitMs: e.PROJECTION_WAIT_MS,
    readyMaxLagEvents: e.READY_MAX_LAG_EVENTS,
    readMinPositionWaitMs: e.READ_MIN_POSITION_WAIT_MS,
    maxJsonDepth: e.MAX_JSON_DEPTH,
    maxEventBytes: e.MAX_EVENT_BYTES,
    sqlTimeoutMs: e.SQL_TIMEOUT_MS,
    sqlRowLimit: e.SQL_ROW_LIMIT,
    sqlMaxListParam: e.SQL_MAX_LIST_PARAM,
    sqlMaxQueryBytes: e.SQL_MAX_QUERY_BYTES,
    sqlMaxAnswerBytes: e.SQL_MAX_ANSWER_BYTES,
    fileUploadMaxBytes: e.FILE_UPLOAD_MAX_BYTES,
    fileUrlUpload: e.FILE_URL_UPLOAD === 'true' || e.FILE_URL_UPLOAD === '1',
    dbConnectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
    duckdbThreads: e.DUCKDB_THREADS,
    trainRowLimit: e.TRAIN_ROW_LIMIT,
    duckdbReaders: e.DUCKDB_READERS,
    duckdbAcquireTimeoutMs: e.DUCKDB_ACQUIRE_TIMEOUT_MS,
    sqlMaxConcurrent: e.SQL_MAX_CONCURRENT,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    duckdbMemoryLimit: memoryLimit(e.DUCKDB_MEMORY_LIMIT ?? '50%'),
    duckdbTempDirectory: path.join(dataDir, 'duckdb.tmp'),
    fileMaxColumns: e.FILE_MAX_COLUMNS,
    dbHosts,
    allowUnauthenticated: e.ALLOW_UNAUTHENTICATED === 'true' || e.ALLOW_UNAUTHENTICATED === '1',
    llm: {
      openaiBaseUrl: e.OPENAI_BASE_URL,
      openaiApiKey: e.OPENAI_API_KEY,
      model: e.LLM_DEFAULT_MODEL,
      requestTimeoutMs: e.LLM_REQUEST_TIMEOUT_MS,
    },
    agentSqlConcurrency: e.AGENT_SQL_CONCURRENCY,
    agentSqlMaxRows: e.AGENT_SQL_MAX_ROWS,
    agentSqlTimeoutMs: e.AGENT_SQL_TIMEOUT_MS,
    mysql: {
      port: e.MYSQL_PORT,
      tls:
        e.MYSQL_TLS_CERT && e.MYSQL_TLS_KEY
          ? { certFile: e.MYSQL_TLS_CERT, keyFile: e.MYSQL_TLS_KEY }
          : undefined,
      maxConnections: e.MYSQL_MAX_CONNECTIONS,
    },
    postgres: {
      port: e.PG_PORT,
      tls: e.PG_TLS_CERT && e.PG_TLS_KEY ? { certFile: e.PG_TLS_CERT, keyFile: e.PG_TLS_KEY } : undefined,
      maxConnections: e.PG_MAX_CONNECTIONS,
    },
    ledger: {
      signingKey: e.LEDGER_SIGNING_KEY ?? path.join(dataDir, 'ledger-signing-key.pem'),
      masterKey: e.LEDGER_MASTER_KEY ?? path.join(dataDir, 'ledger-master-key'),
      retiredMasterKeys: (e.LEDGER_RETIRED_MASTER_KEYS ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
      trustedKeys: (e.LEDGER_TRUSTED_KEYS ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
      origin: e.LEDGER_ORIGIN,
      everyEvents: e.LEDGER_CHECKPOINT_EVENTS,
      everyMs: e.LEDGER_CHECKPOINT_MS,
      onStop: e.LEDGER_CHECKPOINT_ON_STOP === 'true' || e.LEDGER_CHECKPOINT_ON_STOP === '1',
    },
    chatbots: {
      processor: e.CHATBOT_PROCESSOR === 'true' || e.CHATBOT_PROCESSOR === '1',
      leaseMs: e.CHATBOT_LEASE_MS,
      pollMs: e.CHATBOT_POLL_MS,
      concurrency: e.CHATBOT_CONCURRENCY,
      maxAttempts: e.CHATBOT_MAX_ATTEMPTS,
      maxDeliveries: e.CHATBOT_MAX_DELIVERIES,
      retryBaseMs: e.CHATBOT_RETRY_BASE_MS,
      retryMaxMs: e.CHATBOT_RETRY_MAX_MS,
      waitMs: e.CHATBOT_WAIT_MS,
      memoryMessages: e.CHATBOT_MEMORY_MESSAGES,
      slackApiBaseUrl: e.SLACK_API_BASE_URL.replace(/\/+$/, ''),
      telegramApiBaseUrl: e.TELEGRAM_API_BASE_URL.replace(/\/+$/, ''),
      telegramPollSeconds: e.CHATBOT_TELEGRAM_POLL_SECONDS,
    },
    jobs: { pollMs: e.JOBS_POLL_MS, leaseMs: e.JOBS_LEASE_MS },
    triggers: { pollMs: e.TRIGGERS_POLL_MS },
    auth: {
      bootstrap:
        e.AUTH_USERNAME && e.AUTH_PASSWORD
          ? { username: e.AUTH_USERNAME, password: e.AUTH_PASSWORD }
          : undefined,
      sessionTtlMs: e.SESSION_TTL_SECONDS * 1000,
      loginRateLimit: e.LOGIN_RATE_LIMIT,
      loginRateWindowMs: e.LOGIN_RATE_WINDOW_SECONDS * 1000,
      corsOrigins: list(e.CORS_ORIGINS).map((o) => o.replace(/\/+$/, '')),
      allowedHosts: list(e.ALLOWED_HOSTS).map((h) => h.toLowerCase()),
      secureCookies:
        e.COOKIE_SECURE === 'auto' ? 'auto' : e.COOKIE_SECURE === 'true' || e.COOKIE_SECURE === '1',
      trustProxy:
        e.TRUST_PROXY === undefined
          ? undefined
          : e.TRUST_PROXY === 'true'
            ? true
            : e.TRUST_PROXY === 'false'
              ? false
              : /^\d+$/.test(e.TRUST_PROXY)
                ? Number(e.TRUST_PROXY)
                : e.TRUST_PROXY,
    },
  };
};
