import { z } from 'zod';

/**
 * The environment variables the service reads (docs/configuration.md lists them, generated from this schema), as zod parses them: bounds and
 * defaults here; loadConfig (src/config.ts) turns the result into the Config every module reads.
 */
export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(47334),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  EVENT_STORE_URL: z.string().optional(),
  DUCKDB_FILE: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT: z.string().default('10mb'),
  PROJECTION_POLL_MS: z.coerce.number().int().min(0).optional(),
  PROJECTION_LISTEN: z.enum(['true', 'false', '1', '0']).default('true'),
  PROJECTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  PROJECTION_BATCH_PAUSE_MS: z.coerce.number().int().min(0).max(10_000).default(10),
  PROJECTION_PROGRESS_FROM_EVENTS: z.coerce.number().int().min(1).default(10_000),
  PROJECTION_PROGRESS_EVERY_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  PROJECTION_SKIP: z
    .string()
    .regex(
      /^\s*(\d+:[^,:\s]+(\s*,\s*\d+:[^,:\s]+)*)?\s*$/,
      'a comma-separated list of <position>:<projection> (as GET /api/status names a failure)',
    )
    .default(''),
  PROJECTION_WAIT_MS: z.coerce.number().int().min(0).default(30_000),
  READY_MAX_LAG_EVENTS: z.coerce.number().int().min(0).default(1000),
  READ_MIN_POSITION_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(10_000).default(64),
  MAX_EVENT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  SQL_TIMEOUT_MS: z.coerce.number().int().min(1).default(30_000),
  PREDICTION_THREADS: z.coerce.number().int().min(1).max(256).optional(),
  SQL_ROW_LIMIT: z.coerce.number().int().min(1).default(100_000),
  SQL_MAX_LIST_PARAM: z.coerce.number().int().min(0).default(10_000),
  // Both wire protocols carry a statement's parameter count in 16 bits.
  SQL_MAX_PARAMS: z.coerce.number().int().min(0).max(65_535).default(10_000),
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
  SQL_MAX_WAITING_OUTSIDE: z.coerce.number().int().min(1).optional(),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  DUCKDB_MEMORY_LIMIT: z
    .string()
    .regex(
      /^\s*\d+(\.\d+)?\s*(%|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$/i,
      'a size such as 2GB, 1.5GiB or 512MiB, or a share of the memory such as 50%',
    )
    .optional(),
  // Resident memory past which running SQL queries stop (default: DUCKDB_MEMORY_LIMIT + 1 GiB).
  SQL_MAX_PROCESS_MEMORY: z
    .string()
    .regex(
      /^\s*(0|\d+(\.\d+)?\s*(%|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB))\s*$/i,
      'a size such as 4GB or 3.5GiB, a share of the memory such as 40%, or 0 (no watch)',
    )
    .optional(),
  SQL_MAX_VALUE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  FILE_MAX_COLUMNS: z.coerce.number().int().min(1).max(100_000).default(1024),
  // Bounds on converting an uploaded document (PDF, DOCX, HTML, Markdown, text): src/engines/documents.
  DOCUMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 * 1024 * 1024),
  DOCUMENT_MAX_PAGES: z.coerce.number().int().min(1).default(2000),
  DOCUMENT_MAX_SECTIONS: z.coerce.number().int().min(1).default(20_000),
  DOCUMENT_MAX_UNZIPPED_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024 * 1024),
  DOCUMENT_MAX_DEPTH: z.coerce.number().int().min(8).max(10_000).default(512),
  DOCUMENT_TIMEOUT_MS: z.coerce.number().int().min(10).default(60_000),
  DOCUMENT_MAX_MEMORY_MB: z.coerce.number().int().min(32).default(512),
  DB_HOST_ALLOWLIST: z.string().optional(),
  // Hosts and CIDR blocks outbound calls may reach besides public addresses (src/http/outbound.ts).
  OUTBOUND_ALLOW: z.string().optional(),
  // While sign-in is off, loopback and private destinations are reached too (src/http/outbound.ts).
  OUTBOUND_LOCAL_FIRST: z.enum(['true', 'false', '1', '0']).default('true'),
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  LLM_DEFAULT_MODEL: z.string().min(1).optional(),
  LLM_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  AGENT_SQL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  AGENT_SQL_MAX_ROWS: z.coerce.number().int().min(1).default(100),
  AGENT_SQL_TIMEOUT_MS: z.coerce.number().int().min(1).default(300_000),
  LLM_SQL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
  LLM_SQL_MAX_CALLS: z.coerce.number().int().min(1).default(1000),
  LLM_SQL_TIMEOUT_MS: z.coerce.number().int().min(1).default(300_000),
  LLM_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(0),
  LLM_CACHE_TTL_MS: z.coerce.number().int().min(1).default(3_600_000),
  LLM_FUNCTION_MODEL_NAME: z.string().min(1).optional(),
  LLM_FUNCTION_BASE_URL: z.url().optional(),
  LLM_FUNCTION_API_KEY: z.string().min(1).optional(),
  LLM_FUNCTION_TEMPERATURE: z.coerce.number().min(0).max(2).optional(),
  LLM_FUNCTION_MAX_TOKENS: z.coerce.number().int().min(1).optional(),
  MYSQL_PORT: z.coerce.number().int().min(0).max(65535).default(47335),
  MYSQL_TLS_CERT: z.string().min(1).optional(),
  MYSQL_TLS_KEY: z.string().min(1).optional(),
  MYSQL_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1000),
  MYSQL_MAX_PREAUTH: z.coerce.number().int().min(1).default(256),
  MYSQL_MAX_PREAUTH_PER_ADDRESS: z.coerce.number().int().min(1).default(32),
  MYSQL_PREAUTH_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  PG_PORT: z.coerce.number().int().min(0).max(65535).default(55432),
  PG_TLS_CERT: z.string().min(1).optional(),
  PG_TLS_KEY: z.string().min(1).optional(),
  PG_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1000),
  PG_MAX_PREAUTH: z.coerce.number().int().min(1).default(256),
  PG_MAX_PREAUTH_PER_ADDRESS: z.coerce.number().int().min(1).default(32),
  PG_PREAUTH_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  PG_CATALOG_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  PG_CATALOG_MEMORY_MB: z.coerce.number().int().min(16).default(128),
  PG_CATALOG_PROCESSES: z.coerce.number().int().min(1).max(64).default(2),
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
  JOBS_POLL_MS: z.coerce.number().int().min(0).default(1_000),
  TRIGGERS_POLL_MS: z.coerce.number().int().min(0).default(1_000),
  JOBS_LEASE_MS: z.coerce.number().int().min(100).default(600_000),
  SLACK_API_BASE_URL: z.url().default('https://slack.com/api'),
  TELEGRAM_API_BASE_URL: z.url().default('https://api.telegram.org'),
  LEDGER_SIGNING_KEY: z.string().min(1).optional(),
  LEDGER_TRUSTED_KEYS: z.string().min(1).optional(),
  LEDGER_MASTER_KEY: z.string().min(1).optional(),
  LEDGER_MASTER_KEY_FILE: z.string().min(1).optional(),
  LEDGER_WITNESS_DIR: z.string().min(1).optional(),
  LEDGER_RETIRED_MASTER_KEYS: z.string().min(1).optional(),
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
  MCP_ENABLED: z.enum(['true', 'false', '1', '0']).default('true'),
  MCP_MAX_ROWS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  MCP_MAX_CHARS: z.coerce.number().int().min(1000).max(100_000_000).default(200_000),
  MCP_MAX_SESSIONS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  MCP_SESSION_IDLE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(30 * 60_000),
  A2A_ENABLED: z.enum(['true', 'false', '1', '0']).default('true'),
});
