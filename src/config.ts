import os from 'node:os';
import path from 'node:path';
import { bytesOfSize } from './shared/sizes';
import { outboundPolicy, type OutboundPolicy } from './http/outbound';
import { parseHostAllowList, type HostPolicy } from './integrations/hostPolicy';
import { looksLikeKeyText, looksLikePath } from './ledger/envelope';
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

/** The memory this process may use: its cgroup limit when it has one (a container), else the machine's. */
const availableMemory = () => {
  const constrained = process.constrainedMemory();
  return constrained > 0 ? Math.min(constrained, os.totalmem()) : os.totalmem();
};

/**
 * DuckDB's memory_limit by default: a fifth of the memory. It bounds DuckDB's buffer manager only;
 * the values its functions make, the answers being converted, Node's own heap and the allocator's
 * kept pages come on top of it (a query at the old default, half the memory, reached 9.7 GB here).
 */
const DEFAULT_DUCKDB_MEMORY = '20%';

/**
 * DuckDB's memory_limit from DUCKDB_MEMORY_LIMIT: a size as is, a percentage of the memory this
 * process may use.
 */
const memoryLimit = (value: string) => {
  const share = bytesOfShare(value);
  if (share === undefined) return value.trim();
  return `${Math.max(64, Math.floor(share / (1024 * 1024)))}MiB`;
};

/** The bytes a share of the memory (`40%`) stands for, unrounded; undefined for anything else. */
const bytesOfShare = (value: string) => {
  const share = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
  return share ? (availableMemory() * Number(share[1])) / 100 : undefined;
};

/** A size in DuckDB's syntax (`2GB`, `1.5GiB`, `512MiB`) or a share of the memory (`40%`), in bytes. */
const bytesOf = (value: string) => {
  const share = bytesOfShare(value);
  if (share !== undefined) return Math.floor(share);
  const bytes = bytesOfSize(value);
  return Number.isNaN(bytes) ? 0 : bytes;
};

/**
 * SQL_MAX_PROCESS_MEMORY: the resident memory past which running SQL queries are stopped; by
 * default DuckDB's limit plus 1 GiB (the process itself, answers in conversion, Node's heap).
 */
const processMemoryLimit = (value: string | undefined, duckdbMemory: string | undefined) =>
  value !== undefined
    ? bytesOf(value)
    : bytesOf(memoryLimit(duckdbMemory ?? DEFAULT_DUCKDB_MEMORY)) + 1024 ** 3;

/**
 * The master key setting: the key itself (LEDGER_MASTER_KEY, base64 of 32 bytes), or `file:<path>`
 * (LEDGER_MASTER_KEY=file:<path>, or LEDGER_MASTER_KEY_FILE; by default the key file under DATA_DIR).
 * How it is given says which, never its shape: a path that happens to look like a key stays a path.
 */
const masterKeySetting = (key: string | undefined, file: string | undefined, dataDir: string) => {
  if (key !== undefined && file !== undefined)
    throw new Error('Invalid configuration: LEDGER_MASTER_KEY and LEDGER_MASTER_KEY_FILE: set one, not both');
  // Each variable says what it holds; one holding the other's kind is refused, never guessed at: a
  // path taken as a key would make the path the key, a key taken as a path a file named after it.
  if (key !== undefined && !key.startsWith('file:') && looksLikePath(key))
    throw new Error(
      `Invalid configuration: LEDGER_MASTER_KEY looks like a file path; set LEDGER_MASTER_KEY_FILE=${key} instead (or LEDGER_MASTER_KEY=file:<path>). LEDGER_MASTER_KEY holds the key itself: 32 bytes as base64, padded with = when it holds a /`,
    );
  const fileSetting = key?.startsWith('file:') ? key.slice('file:'.length) : file;
  if (fileSetting !== undefined && looksLikeKeyText(fileSetting.trim()))
    throw new Error(
      `Invalid configuration: ${file !== undefined ? 'LEDGER_MASTER_KEY_FILE' : 'LEDGER_MASTER_KEY=file:'} looks like a key, not a file path; set LEDGER_MASTER_KEY=<the key> instead, or name the key's file`,
    );
  if (key !== undefined)
    return key.startsWith('file:') ? `file:${path.resolve(key.slice('file:'.length))}` : key;
  return `file:${path.resolve(file ?? path.join(dataDir, 'ledger-master-key'))}`;
};

type Env = ReturnType<typeof envSchema.parse>;

/** A switch set in the environment: `true` or `1`. */
const flag = (value: string | undefined) => value === 'true' || value === '1';

/** A comma-separated setting, its items trimmed, empty ones dropped. */
const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

/** A door's TLS files: both or neither. */
const tlsFiles = (certFile: string | undefined, keyFile: string | undefined) =>
  certFile && keyFile ? { certFile, keyFile } : undefined;

const parsedEnv = (env: NodeJS.ProcessEnv): Env => {
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
  return e;
};

/** Where outbound requests and database connections may go. */
const hostPolicies = (e: Env): { outbound: OutboundPolicy; dbHosts: HostPolicy } => {
  try {
    const outbound = outboundPolicy(e.OUTBOUND_ALLOW, { localFirst: flag(e.OUTBOUND_LOCAL_FIRST) });
    // DB_HOST_ALLOWLIST, when set, is the whole rule for database hosts (its entries may be private);
    // without it, database hosts pass the outbound policy like every other destination.
    const dbHosts: HostPolicy = e.DB_HOST_ALLOWLIST?.trim()
      ? parseHostAllowList(e.DB_HOST_ALLOWLIST)
      : {
          restricted: false,
          // The address that was checked: the driver connects there, not to the name again.
          check: async (host) => (await outbound.checkHost(host, 'Database host'))[0]!.address,
        };
    return { outbound, dbHosts };
  } catch (error) {
    throw new Error(`Invalid configuration: ${(error as Error).message}`);
  }
};

const doorsConfig = (e: Env): Pick<Config, 'mysql' | 'postgres'> => ({
  mysql: {
    port: e.MYSQL_PORT,
    tls: tlsFiles(e.MYSQL_TLS_CERT, e.MYSQL_TLS_KEY),
    maxConnections: e.MYSQL_MAX_CONNECTIONS,
    preAuth: {
      max: e.MYSQL_MAX_PREAUTH,
      perAddress: e.MYSQL_MAX_PREAUTH_PER_ADDRESS,
      timeoutMs: e.MYSQL_PREAUTH_TIMEOUT_MS,
    },
  },
  postgres: {
    port: e.PG_PORT,
    tls: tlsFiles(e.PG_TLS_CERT, e.PG_TLS_KEY),
    maxConnections: e.PG_MAX_CONNECTIONS,
    preAuth: {
      max: e.PG_MAX_PREAUTH,
      perAddress: e.PG_MAX_PREAUTH_PER_ADDRESS,
      timeoutMs: e.PG_PREAUTH_TIMEOUT_MS,
    },
    catalog: {
      timeoutMs: e.PG_CATALOG_TIMEOUT_MS,
      memoryMb: e.PG_CATALOG_MEMORY_MB,
      processes: e.PG_CATALOG_PROCESSES,
    },
  },
});

const ledgerConfig = (e: Env, dataDir: string): Config['ledger'] => ({
  signingKey: e.LEDGER_SIGNING_KEY ?? path.join(dataDir, 'ledger-signing-key.pem'),
  // A key is given as a key, a file as a file (never told apart by shape): `file:<path>`.
  masterKey: masterKeySetting(e.LEDGER_MASTER_KEY, e.LEDGER_MASTER_KEY_FILE, dataDir),
  witnessDir: path.resolve(e.LEDGER_WITNESS_DIR ?? path.join(dataDir, 'ledger-witness')),
  retiredMasterKeys: list(e.LEDGER_RETIRED_MASTER_KEYS),
  trustedKeys: list(e.LEDGER_TRUSTED_KEYS),
  origin: e.LEDGER_ORIGIN,
  everyEvents: e.LEDGER_CHECKPOINT_EVENTS,
  everyMs: e.LEDGER_CHECKPOINT_MS,
  onStop: flag(e.LEDGER_CHECKPOINT_ON_STOP),
});

const chatbotsConfig = (e: Env): Config['chatbots'] => ({
  processor: flag(e.CHATBOT_PROCESSOR),
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
});

/** TRUST_PROXY as express takes it: a boolean, a hop count, or its own text (addresses, names). */
const trustProxy = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value === 'true'
      ? true
      : value === 'false'
        ? false
        : /^\d+$/.test(value)
          ? Number(value)
          : value;

const authConfig = (e: Env): Config['auth'] => ({
  bootstrap:
    e.AUTH_USERNAME && e.AUTH_PASSWORD ? { username: e.AUTH_USERNAME, password: e.AUTH_PASSWORD } : undefined,
  sessionTtlMs: e.SESSION_TTL_SECONDS * 1000,
  loginRateLimit: e.LOGIN_RATE_LIMIT,
  loginRateWindowMs: e.LOGIN_RATE_WINDOW_SECONDS * 1000,
  corsOrigins: list(e.CORS_ORIGINS).map((o) => o.replace(/\/+$/, '')),
  allowedHosts: list(e.ALLOWED_HOSTS).map((h) => h.toLowerCase()),
  secureCookies: e.COOKIE_SECURE === 'auto' ? 'auto' : flag(e.COOKIE_SECURE),
  trustProxy: trustProxy(e.TRUST_PROXY),
});

/** The language models' settings: agents', SQL's LLM() and its function's. */
const llmConfig = (e: Env): Pick<Config, 'llm' | 'llmSql' | 'llmFunction'> => ({
  llm: {
    openaiBaseUrl: e.OPENAI_BASE_URL,
    openaiApiKey: e.OPENAI_API_KEY,
    model: e.LLM_DEFAULT_MODEL,
    requestTimeoutMs: e.LLM_REQUEST_TIMEOUT_MS,
  },
  llmSql: {
    concurrency: e.LLM_SQL_CONCURRENCY,
    maxCalls: e.LLM_SQL_MAX_CALLS,
    timeoutMs: e.LLM_SQL_TIMEOUT_MS,
    cacheEntries: e.LLM_CACHE_ENTRIES,
    cacheTtlMs: e.LLM_CACHE_TTL_MS,
  },
  llmFunction: {
    model: e.LLM_FUNCTION_MODEL_NAME,
    baseUrl: e.LLM_FUNCTION_BASE_URL,
    apiKey: e.LLM_FUNCTION_API_KEY,
    temperature: e.LLM_FUNCTION_TEMPERATURE,
    maxTokens: e.LLM_FUNCTION_MAX_TOKENS,
  },
});

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => {
  const e = parsedEnv(env);
  const policies = hostPolicies(e);
  if (Boolean(e.AUTH_USERNAME) !== Boolean(e.AUTH_PASSWORD))
    throw new Error('Invalid configuration: AUTH_USERNAME and AUTH_PASSWORD go together (both, or neither)');
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
    projectionListen: flag(e.PROJECTION_LISTEN),
    projectionBatchSize: e.PROJECTION_BATCH_SIZE,
    projectionBatchPauseMs: e.PROJECTION_BATCH_PAUSE_MS,
    projectionProgressFromEvents: e.PROJECTION_PROGRESS_FROM_EVENTS,
    projectionProgressEveryMs: e.PROJECTION_PROGRESS_EVERY_MS,
    projectionSkip: list(e.PROJECTION_SKIP),
    projectionWaitMs: e.PROJECTION_WAIT_MS,
    readyMaxLagEvents: e.READY_MAX_LAG_EVENTS,
    readMinPositionWaitMs: e.READ_MIN_POSITION_WAIT_MS,
    maxJsonDepth: e.MAX_JSON_DEPTH,
    maxEventBytes: e.MAX_EVENT_BYTES,
    sqlTimeoutMs: e.SQL_TIMEOUT_MS,
    predictionThreads: e.PREDICTION_THREADS ?? os.availableParallelism(),
    sqlRowLimit: e.SQL_ROW_LIMIT,
    sqlMaxListParam: e.SQL_MAX_LIST_PARAM,
    sqlMaxParams: e.SQL_MAX_PARAMS,
    sqlMaxQueryBytes: e.SQL_MAX_QUERY_BYTES,
    sqlMaxAnswerBytes: e.SQL_MAX_ANSWER_BYTES,
    fileUploadMaxBytes: e.FILE_UPLOAD_MAX_BYTES,
    fileUrlUpload: flag(e.FILE_URL_UPLOAD),
    dbConnectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
    duckdbThreads: e.DUCKDB_THREADS,
    trainRowLimit: e.TRAIN_ROW_LIMIT,
    duckdbReaders: e.DUCKDB_READERS,
    duckdbAcquireTimeoutMs: e.DUCKDB_ACQUIRE_TIMEOUT_MS,
    sqlMaxConcurrent: e.SQL_MAX_CONCURRENT,
    sqlMaxWaitingOutside: e.SQL_MAX_WAITING_OUTSIDE,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    duckdbMemoryLimit: memoryLimit(e.DUCKDB_MEMORY_LIMIT ?? DEFAULT_DUCKDB_MEMORY),
    duckdbTempDirectory: path.join(dataDir, 'duckdb.tmp'),
    sqlMaxProcessMemory: processMemoryLimit(e.SQL_MAX_PROCESS_MEMORY, e.DUCKDB_MEMORY_LIMIT),
    sqlMaxValueBytes: e.SQL_MAX_VALUE_BYTES,
    fileMaxColumns: e.FILE_MAX_COLUMNS,
    documents: {
      maxBytes: e.DOCUMENT_MAX_BYTES,
      maxPages: e.DOCUMENT_MAX_PAGES,
      maxSections: e.DOCUMENT_MAX_SECTIONS,
      maxUnzippedBytes: e.DOCUMENT_MAX_UNZIPPED_BYTES,
      maxDepth: e.DOCUMENT_MAX_DEPTH,
      timeoutMs: e.DOCUMENT_TIMEOUT_MS,
      maxMemoryMb: e.DOCUMENT_MAX_MEMORY_MB,
    },
    ...policies,
    allowUnauthenticated: flag(e.ALLOW_UNAUTHENTICATED),
    ...llmConfig(e),
    agentSqlConcurrency: e.AGENT_SQL_CONCURRENCY,
    agentSqlMaxRows: e.AGENT_SQL_MAX_ROWS,
    agentSqlTimeoutMs: e.AGENT_SQL_TIMEOUT_MS,
    ...doorsConfig(e),
    ledger: ledgerConfig(e, dataDir),
    chatbots: chatbotsConfig(e),
    jobs: { pollMs: e.JOBS_POLL_MS, leaseMs: e.JOBS_LEASE_MS },
    triggers: { pollMs: e.TRIGGERS_POLL_MS },
    mcp: {
      enabled: flag(e.MCP_ENABLED),
      maxRows: e.MCP_MAX_ROWS,
      maxChars: e.MCP_MAX_CHARS,
      maxSessions: e.MCP_MAX_SESSIONS,
      sessionIdleMs: e.MCP_SESSION_IDLE_MS,
    },
    a2a: { enabled: flag(e.A2A_ENABLED) },
    auth: authConfig(e),
  };
};
