import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseHostAllowList, type HostPolicy } from './integrations/hostPolicy';

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(47334),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  EVENT_STORE_URL: z.string().optional(),
  DUCKDB_FILE: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT: z.string().default('10mb'),
  PROJECTION_POLL_MS: z.coerce.number().int().min(0).optional(),
  PROJECTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  PROJECTION_WAIT_MS: z.coerce.number().int().min(0).default(30_000),
  MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(10_000).default(64),
  MAX_EVENT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  SQL_TIMEOUT_MS: z.coerce.number().int().min(1).default(30_000),
  SQL_ROW_LIMIT: z.coerce.number().int().min(1).default(100_000),
  SQL_MAX_LIST_PARAM: z.coerce.number().int().min(0).default(10_000),
  SQL_MAX_QUERY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024),
  SQL_MAX_ANSWER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024 * 1024),
  FILE_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 * 1024 * 1024),
  FILE_URL_UPLOAD: z.enum(['true', 'false', '1', '0']).default('false'),
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(1).default(5000),
  DUCKDB_THREADS: z.coerce.number().int().min(1).optional(),
  TRAIN_ROW_LIMIT: z.coerce.number().int().min(1).default(1_000_000),
  DUCKDB_READERS: z.coerce.number().int().min(1).max(64).default(8),
  DUCKDB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  SQL_MAX_CONCURRENT: z.coerce.number().int().min(1).optional(),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  DUCKDB_MEMORY_LIMIT: z
    .string()
    .regex(
      /^\s*\d+(\.\d+)?\s*(%|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$/i,
      'a size such as 2GB, 1.5GiB or 512MiB, or a share of the memory such as 50%',
    )
    .optional(),
  FILE_MAX_COLUMNS: z.coerce.number().int().min(1).max(100_000).default(1024),
  DB_HOST_ALLOWLIST: z.string().optional(),
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  LLM_DEFAULT_MODEL: z.string().min(1).optional(),
  LLM_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  AGENT_SQL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  AGENT_SQL_MAX_ROWS: z.coerce.number().int().min(1).default(100),
  AGENT_SQL_TIMEOUT_MS: z.coerce.number().int().min(1).default(300_000),
  MYSQL_PORT: z.coerce.number().int().min(0).max(65535).default(47335),
  MYSQL_TLS_CERT: z.string().min(1).optional(),
  MYSQL_TLS_KEY: z.string().min(1).optional(),
  MYSQL_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1000),
  ALLOW_UNAUTHENTICATED: z.enum(['true', 'false', '1', '0']).default('false'),
  CHATBOT_PROCESSOR: z.enum(['true', 'false', '1', '0']).default('true'),
  CHATBOT_LEASE_MS: z.coerce.number().int().min(100).default(120_000),
  CHATBOT_POLL_MS: z.coerce.number().int().min(10).default(500),
  CHATBOT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  CHATBOT_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(5),
  CHATBOT_MAX_DELIVERIES: z.coerce.number().int().min(1).default(8),
  CHATBOT_RETRY_BASE_MS: z.coerce.number().int().min(1).default(2_000),
  CHATBOT_RETRY_MAX_MS: z.coerce.number().int().min(1).default(300_000),
  CHATBOT_WAIT_MS: z.coerce.number().int().min(0).default(60_000),
  CHATBOT_MEMORY_MESSAGES: z.coerce.number().int().min(0).max(10_000).default(100),
  SLACK_API_BASE_URL: z.url().default('https://slack.com/api'),
  TELEGRAM_API_BASE_URL: z.url().default('https://api.telegram.org'),
  LEDGER_SIGNING_KEY: z.string().min(1).optional(),
  LEDGER_TRUSTED_KEYS: z.string().min(1).optional(),
  LEDGER_ORIGIN: z.string().min(1).max(200).default('mindledger'),
  LEDGER_CHECKPOINT_EVENTS: z.coerce.number().int().min(1).default(1000),
  LEDGER_CHECKPOINT_MS: z.coerce.number().int().min(100).default(10_000),
  LEDGER_CHECKPOINT_ON_STOP: z.enum(['true', 'false', '1', '0']).default('true'),
  CHATBOT_TELEGRAM_POLL_SECONDS: z.coerce.number().int().min(0).max(50).default(25),
  AUTH_USERNAME: z.string().min(1).optional(),
  AUTH_PASSWORD: z.string().min(1).optional(),
  SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(7 * 24 * 3600),
  LOGIN_RATE_LIMIT: z.coerce.number().int().min(1).default(10),
  LOGIN_RATE_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(15 * 60),
  CORS_ORIGINS: z.string().optional(),
  ALLOWED_HOSTS: z.string().optional(),
  COOKIE_SECURE: z.enum(['auto', 'true', 'false', '1', '0']).default('auto'),
  TRUST_PROXY: z.string().min(1).optional(),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  eventStoreUrl: string | undefined;
  duckdbFile: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  bodyLimit: string;
  projectionPollMs: number;
  projectionBatchSize: number;
  /** How long a write waits for its events to reach the read model before answering 202. */
  projectionWaitMs: number;
  /** Deepest nesting of a free-form JSON value (params, options) an event may hold. */
  maxJsonDepth: number;
  /** Largest event, as JSON. */
  maxEventBytes: number;
  sqlTimeoutMs: number;
  sqlRowLimit: number;
  /** Items the list parameters of one SQL query may hold together. */
  sqlMaxListParam: number;
  /** Largest SQL text, in UTF-8 bytes. */
  sqlMaxQueryBytes: number;
  /** Bytes (UTF-8 JSON) the rows of one SQL answer may take; past them it is cut. */
  sqlMaxAnswerBytes: number;
  fileUploadMaxBytes: number;
  fileUrlUpload: boolean;
  dbConnectTimeoutMs: number;
  duckdbThreads: number | undefined;
  trainRowLimit: number;
  duckdbReaders: number;
  duckdbAcquireTimeoutMs: number;
  /** Pooled readers SQL endpoint queries may hold at once (undefined: all but one). */
  sqlMaxConcurrent: number | undefined;
  /** After SIGTERM/SIGINT, how long in-flight requests may take before queries are interrupted. */
  shutdownGraceMs: number;
  /** DuckDB's memory_limit, in DuckDB's syntax. */
  duckdbMemoryLimit: string;
  /** Where DuckDB spills what does not fit in its memory limit (under DATA_DIR). */
  duckdbTempDirectory: string;
  fileMaxColumns: number;
  /** Hosts external databases may be registered on (all, unless DB_HOST_ALLOWLIST lists some). */
  dbHosts: HostPolicy;
  /** The operator accepts serving without authentication on a non-loopback address. */
  allowUnauthenticated: boolean;
  /** Where agents' LLM calls go when an agent names no base URL or key of its own. */
  llm: { openaiBaseUrl?: string; openaiApiKey?: string; model?: string; requestTimeoutMs: number };
  /** Questions to an agent in one SQL query: how many at once, how many in all, for how long. */
  agentSqlConcurrency: number;
  agentSqlMaxRows: number;
  agentSqlTimeoutMs: number;
  /** The MySQL wire protocol's port (0: off), and its TLS certificate and key files. */
  mysql: { port: number; tls?: { certFile: string; keyFile: string }; maxConnections: number };
  /** Chatbots that run: this process's share of the answering, and where their channels live. */
  ledger: {
    /** A PEM / base64 Ed25519 key, or the path of its file (created on first start). */
    signingKey: string;
    /** More public keys whose checkpoints verify (earlier keys, other nodes'), comma-separated. */
    trustedKeys: string[];
    origin: string;
    everyEvents: number;
    everyMs: number;
    /** Sign what is unsigned at a clean stop. */
    onStop: boolean;
  };
  chatbots: {
    processor: boolean;
    leaseMs: number;
    pollMs: number;
    concurrency: number;
    maxAttempts: number;
    maxDeliveries: number;
    retryBaseMs: number;
    retryMaxMs: number;
    waitMs: number;
    memoryMessages: number;
    slackApiBaseUrl: string;
    telegramApiBaseUrl: string;
    /** Telegram getUpdates long-poll time. */
    telegramPollSeconds: number;
  };
  /** Sign-in (README "Sign-in and roles"). */
  auth: {
    /** The admin made (or reset) at start: turns authentication on. */
    bootstrap: { username: string; password: string } | undefined;
    sessionTtlMs: number;
    /** Failed logins allowed per user and per address in each window. */
    loginRateLimit: number;
    loginRateWindowMs: number;
    /** Origins (scheme://host[:port]) allowed cross-origin requests with credentials; none: CORS off. */
    corsOrigins: string[];
    /** Host names accepted besides loopback ones while authentication is off. */
    allowedHosts: string[];
    /** `Secure` on the session cookie: always, never, or when the request came over HTTPS. */
    secureCookies: 'auto' | boolean;
    /**
     * Express's `trust proxy`: which proxies' X-Forwarded-For/-Proto to believe (the client address
     * that rate limits and actors name, and whether the request came over HTTPS). Unset: none.
     */
    trustProxy: boolean | number | string | undefined;
  };
};

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
    projectionBatchSize: e.PROJECTION_BATCH_SIZE,
    projectionWaitMs: e.PROJECTION_WAIT_MS,
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
    ledger: {
      signingKey: e.LEDGER_SIGNING_KEY ?? path.join(dataDir, 'ledger-signing-key.pem'),
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

export const isLoopback = (host: string) => {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
};

/**
 * Why this configuration must not start, or null. With no authentication, anyone who reaches the
 * port can read and delete everything: serving on an address other hosts can reach needs the
 * operator's explicit ALLOW_UNAUTHENTICATED=1 (the Docker image binds 0.0.0.0).
 */
export const unsafeBinding = (config: Config): string | null =>
  isLoopback(config.host) || config.allowUnauthenticated || config.auth.bootstrap !== undefined
    ? null
    : `Refusing to listen on ${config.host}: authentication is off, so anyone who can reach this address could read, change and delete every project. Listen on 127.0.0.1 (HOST), or set ALLOW_UNAUTHENTICATED=1 to serve without authentication anyway (behind a trusted network or proxy).`;
