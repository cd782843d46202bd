import type { z } from 'zod';
import type { OutboundPolicy } from '../http/outbound';
import type { HostPolicy } from '../integrations/hostPolicy';
import type { envSchema } from './environment';

/**
 * What converting one uploaded document may cost (src/engines/documents); each passed limit is
 * refused with a 400 naming its setting.
 */
export type DocumentLimits = {
  /** Pages a PDF may have (DOCUMENT_MAX_PAGES). */
  maxPages: number;
  /** Sections a converted document may have (DOCUMENT_MAX_SECTIONS). */
  maxSections: number;
  /** Bytes a DOCX's entries may inflate to, together (DOCUMENT_MAX_UNZIPPED_BYTES). */
  maxUnzippedBytes: number;
  /** Element nesting an HTML (or a DOCX's HTML) may have (DOCUMENT_MAX_DEPTH). */
  maxDepth: number;
  /** Time one conversion may take before it is stopped (DOCUMENT_TIMEOUT_MS). */
  timeoutMs: number;
  /** Heap the conversion's worker thread may use, in MiB (DOCUMENT_MAX_MEMORY_MB). */
  maxMemoryMb: number;
};

/** The configuration every module reads: what loadConfig (src/config.ts) makes of the environment. */
export type Config = {
  port: number;
  host: string;
  dataDir: string;
  eventStoreUrl: string | undefined;
  duckdbFile: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  bodyLimit: string;
  projectionPollMs: number;
  /**
   * Hear of other processes' appends as they commit (PostgreSQL LISTEN/NOTIFY); off: by polling
   * alone (e.g. behind a connection pooler in transaction mode, where LISTEN does not work).
   */
  projectionListen: boolean;
  projectionBatchSize: number;
  /** The pause before a batch nobody waits for, after another: events arriving meanwhile join it. */
  projectionBatchPauseMs: number;
  /** A start at least this many log positions behind logs its catch-up's progress (a rebuild, a new node). */
  projectionProgressFromEvents: number;
  /** How often such a start logs its progress while it catches up (0: after every batch). */
  projectionProgressEveryMs: number;
  /**
   * Events one projection passes over, as `<position>:<projection>` (PROJECTION_SKIP): an operator's
   * way past an event that projection cannot apply, without editing the log.
   */
  projectionSkip: readonly string[];
  /** How long a write waits for its events to reach the read model before answering 202. */
  projectionWaitMs: number;
  /** How far the read model may trail the log's head (in log positions) while GET /api/ready says ready. */
  readyMaxLagEvents: number;
  /** How long a read asking for a log position (X-Min-Log-Position) waits for it before answering 503. */
  readMinPositionWaitMs: number;
  /** Deepest nesting of a free-form JSON value (params, options) an event may hold. */
  maxJsonDepth: number;
  /** Largest event, as JSON. */
  maxEventBytes: number;
  sqlTimeoutMs: number;
  /** Threads a large prediction's trees are walked on, this process's own included. */
  predictionThreads: number;
  sqlRowLimit: number;
  /** Items the list parameters of one SQL query may hold together. */
  sqlMaxListParam: number;
  /** Distinct parameters (placeholders) one SQL statement may bind, on every door. */
  sqlMaxParams: number;
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
  /** SQL queries that may wait outside the process at once, their readers set aside (undefined: 4 × the SQL share). */
  sqlMaxWaitingOutside: number | undefined;
  /** After SIGTERM/SIGINT, how long in-flight requests may take before queries are interrupted. */
  shutdownGraceMs: number;
  /** DuckDB's memory_limit, in DuckDB's syntax. */
  duckdbMemoryLimit: string;
  /** Where DuckDB spills what does not fit in its memory limit (under DATA_DIR). */
  duckdbTempDirectory: string;
  /** Resident bytes of the process past which running SQL queries are stopped (0: never). */
  sqlMaxProcessMemory: number;
  /** The largest value (bytes, or list items x 8) repeat, lpad, rpad, range, list_resize may make. */
  sqlMaxValueBytes: number;
  fileMaxColumns: number;
  /** Bounds on converting an uploaded document (DOCUMENT_*; src/engines/documents). */
  documents: DocumentLimits & { maxBytes: number };
  /** Hosts external databases may be registered on (all, unless DB_HOST_ALLOWLIST lists some). */
  dbHosts: HostPolicy;
  /**
   * Where outbound calls (LLM, embeddings, webhooks, Slack/Telegram, file URLs, database hosts without
   * DB_HOST_ALLOWLIST) may go: public addresses, plus OUTBOUND_ALLOW's hosts and blocks.
   */
  outbound: OutboundPolicy;
  /** The operator accepts serving without authentication on a non-loopback address. */
  allowUnauthenticated: boolean;
  /** Where agents' LLM calls go when an agent names no base URL or key of its own. */
  llm: { openaiBaseUrl?: string; openaiApiKey?: string; model?: string; requestTimeoutMs: number };
  /** Questions to an agent in one SQL query: how many at once, how many in all, for how long. */
  agentSqlConcurrency: number;
  agentSqlMaxRows: number;
  agentSqlTimeoutMs: number;
  /**
   * Calls one SQL query makes to LLMs (an LLM model queried or joined, LLM()): how many at once, how
   * many in all, for how long; and the answer cache (0 entries: off).
   */
  llmSql: {
    concurrency: number;
    maxCalls: number;
    timeoutMs: number;
    cacheEntries: number;
    cacheTtlMs: number;
  };
  /** LLM()'s model (MindsDB's LLM_FUNCTION_* variables); unset parts fall back to `llm`. */
  llmFunction: {
    model?: string;
    baseUrl?: string;
    apiKey?: string;
    temperature?: number;
    maxTokens?: number;
  };
  /** The MySQL wire protocol's port (0: off), and its TLS certificate and key files. */
  mysql: {
    port: number;
    tls?: { certFile: string; keyFile: string };
    maxConnections: number;
    /** Connections not signed in yet: at most `max`, `perAddress` from one address, each for `timeoutMs`. */
    preAuth: { max: number; perAddress: number; timeoutMs: number };
  };
  /** The PostgreSQL wire protocol (PG_PORT; 0: off), TLS from PG_TLS_CERT/KEY. */
  postgres: {
    port: number;
    tls?: { certFile: string; keyFile: string };
    maxConnections: number;
    preAuth: { max: number; perAddress: number; timeoutMs: number };
    /** The pg_catalog shadow's bounds: per query, and processes running queries at once. */
    catalog: { timeoutMs: number; memoryMb: number; processes: number };
  };
  /** Chatbots that run: this process's share of the answering, and where their channels live. */
  ledger: {
    /** A PEM / base64 Ed25519 key, or the path of its file (created on first start). */
    signingKey: string;
    /** More public keys whose checkpoints verify (earlier keys, other nodes'), comma-separated. */
    trustedKeys: string[];
    /**
     * The master key that wraps every resource's data key: base64 of 32 bytes, or `file:<path>` of
     * its file (created on first start): the same on every process of one PostgreSQL log.
     */
    masterKey: string;
    /** Where this process witnesses every checkpoint it sees (LEDGER_WITNESS_DIR): an append-only file outside the log. */
    witnessDir: string;
    /** Earlier master keys (base64 or paths), still accepted to unwrap data keys wrapped by them. */
    retiredMasterKeys: string[];
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
  /** The trigger watcher (src/triggers/watcher.ts): how often queues are read; 0: never (specs tick by hand). */
  triggers: { pollMs: number };
  /** The job scheduler (src/jobs/scheduler.ts). */
  jobs: {
    /** How often due jobs are looked for; 0: never (specs tick by hand). */
    pollMs: number;
    /** How long a run's claim holds before the next tick may abandon it. */
    leaseMs: number;
  };
  /** The MCP server at /mcp/ (docs/mcp.md): on or off, the caps on one answer, the sessions kept. */
  mcp: {
    enabled: boolean;
    /** Rows one tool answer carries at most (more: cut, `truncated` said). */
    maxRows: number;
    /** Characters of one tool answer's JSON at most (rows dropped from the end until it fits). */
    maxChars: number;
    /** Sessions open at once; past it, the one idle longest is closed. */
    maxSessions: number;
    /** A session unused this long is closed (its calls stay in the log). */
    sessionIdleMs: number;
  };
  /** Agents over the Agent2Agent protocol at /a2a/{project}/{agent}/ (docs/a2a.md). */
  a2a: { enabled: boolean };
  /** Sign-in (docs/security.md "Sign-in and roles"). */
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
