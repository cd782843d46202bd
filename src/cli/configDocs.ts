import { z } from 'zod';
import { envSchema } from '../config/environment';

/*
 * `npx tsx src/cli/configDocs.ts > docs/configuration.md`: the configuration reference, generated.
 *
 * What is data in the schema (src/config/environment.ts) comes from the schema: each variable's
 * name, type, bounds and default. What is not (what a variable means, and a default that
 * src/config.ts works out from other settings) is written here, one entry per variable. The entry
 * list is a Record over the schema's keys, so a variable added without an entry does not compile,
 * and test/docs/configuration.spec.ts fails when docs/configuration.md is not this script's output.
 */

type Variable = keyof typeof envSchema.shape;

const SECTIONS = {
  serving: {
    title: 'Serving',
    intro: 'Where the service listens, where it keeps its files, what it logs and how it stops.',
  },
  log: {
    title: 'Event log and read model',
    intro:
      'The log is the truth; the DuckDB read model follows it. See [How a request flows](how-it-works.md) and [Running on PostgreSQL](operating.md#running-on-postgresql-scale-out).',
  },
  sql: {
    title: 'SQL and DuckDB',
    intro:
      'Bounds on what one SQL statement may cost, on every door (HTTP, MySQL, PostgreSQL). Each is refused with a SQL error naming it, never a 500: see [Bounds](operating.md#bounds-on-what-one-client-can-make-the-service-do).',
  },
  data: {
    title: 'Files, external databases and outbound calls',
    intro: 'See [Data in](data.md) and [Outbound calls](security.md#outbound-calls).',
  },
  agents: {
    title: 'Models, agents and LLM providers',
    intro: 'See [Agents that answer](agents.md#agents-that-answer) and [Models](models.md).',
  },
  mysql: {
    title: 'MySQL door',
    intro: 'See [the MySQL protocol](sql.md#sql-tools-the-mysql-protocol-on-port-47335).',
  },
  postgres: {
    title: 'PostgreSQL door',
    intro: 'See [the PostgreSQL protocol](sql.md#sql-tools-the-postgresql-protocol-on-port-55432).',
  },
  chatbots: {
    title: 'Chatbots',
    intro: 'See [Chatbots that chat](agents.md#chatbots-that-chat).',
  },
  jobs: {
    title: 'Jobs and triggers',
    intro: 'See [Jobs and triggers](sql.md#jobs-and-triggers).',
  },
  auth: {
    title: 'Sign-in and web security',
    intro: 'See [Sign-in and roles](security.md#sign-in-and-roles).',
  },
  ledger: {
    title: 'Ledger and secrets',
    intro:
      'See [The ledger](operating.md#the-ledger-a-log-auditors-can-check) and [Secrets that can be forgotten](security.md#secrets-that-can-be-forgotten-crypto-shredding).',
  },
  mcp: {
    title: 'MCP server',
    intro:
      'The Model Context Protocol at `/mcp/` on the HTTP port, with the same sign-in and roles as the rest of the API. See [MCP](mcp.md).',
  },
  a2a: {
    title: 'A2A server',
    intro:
      'Each agent over the Agent2Agent protocol at `/a2a/{project}/{agent}/` on the HTTP port, with the same sign-in and roles as its REST completions. See [A2A](a2a.md).',
  },
} as const;

type Section = keyof typeof SECTIONS;

type Entry = {
  readonly section: Section;
  /** What the variable does, for a reader who has not read the code. */
  readonly meaning: string;
  /** The default when the schema has none because src/config.ts works it out (from other settings). */
  readonly whenUnset?: string;
};

/** Every variable of the schema, in the order the page lists them within a section. */
export const ENTRIES: Record<Variable, Entry> = {
  PORT: { section: 'serving', meaning: "HTTP port (MindsDB's)." },
  HOST: {
    section: 'serving',
    meaning:
      "Interface to bind. With authentication off, any other address than a loopback one (the Docker image's `0.0.0.0`) is refused at start unless `ALLOW_UNAUTHENTICATED=1`; with authentication on, any address.",
  },
  DATA_DIR: {
    section: 'serving',
    meaning:
      "Where the SQLite log (`events.sqlite`), the DuckDB file (`projections.duckdb`), uploaded files (`files/blobs`), data keys (`keys`, with the log on SQLite), the ledger's keys and witness and the MySQL door's TLS files (`tls`) live.",
  },
  LOG_LEVEL: { section: 'serving', meaning: 'Level of the JSON log lines on stdout.' },
  BODY_LIMIT: { section: 'serving', meaning: 'Largest JSON body accepted; larger is a 413.' },
  SHUTDOWN_GRACE_MS: {
    section: 'serving',
    meaning:
      'After SIGTERM or SIGINT, in-flight requests have this long; then running queries are interrupted and the process exits (killed if still there 5 s later).',
  },
  ALLOW_UNAUTHENTICATED: {
    section: 'auth',
    meaning: '`1`: serve without authentication on a non-loopback `HOST` (the startup log warns).',
  },
  AUTH_USERNAME: {
    section: 'auth',
    meaning:
      'With `AUTH_PASSWORD` (both or neither): authentication is on, and this admin exists with this password (made at start, its password reset if it differs). An admin made with `npm run user -- add` turns authentication on too.',
  },
  AUTH_PASSWORD: { section: 'auth', meaning: 'The password of `AUTH_USERNAME` (both or neither).' },
  SESSION_TTL_SECONDS: {
    section: 'auth',
    meaning: 'How long a session (the cookie `POST /api/login` sets) lasts (7 days).',
  },
  LOGIN_RATE_LIMIT: {
    section: 'auth',
    meaning:
      'Failed sign-ins allowed per client address and per user name in each window, then 429 with `Retry-After` (successful ones are not counted). Over the MySQL and PostgreSQL doors, one count for both doors, then the login is refused before the password is checked.',
  },
  LOGIN_RATE_WINDOW_SECONDS: { section: 'auth', meaning: 'The window of `LOGIN_RATE_LIMIT` (15 minutes).' },
  CORS_ORIGINS: {
    section: 'auth',
    meaning:
      'Comma-separated origins (`https://console.example.com`) allowed cross-origin requests with credentials; their cookie-signed writes pass the CSRF check too.',
    whenUnset: 'unset (CORS off)',
  },
  ALLOWED_HOSTS: {
    section: 'auth',
    meaning:
      'Host names served besides loopback ones while authentication is off (the DNS-rebinding check), e.g. a Docker service name that Prometheus scrapes.',
  },
  COOKIE_SECURE: {
    section: 'auth',
    meaning:
      '`Secure` on the session cookie: `true`, `false`, or `auto` (when the request came over HTTPS; behind a TLS proxy set `true`).',
  },
  MCP_ENABLED: {
    section: 'mcp',
    meaning: '`false`: no MCP server (`/mcp/` answers 404).',
  },
  MCP_MAX_ROWS: {
    section: 'mcp',
    meaning:
      'Rows one tool answer carries at most; more are cut and the answer says `truncated: true` (the `SQL_ROW_LIMIT` of the statement still applies first).',
  },
  MCP_MAX_CHARS: {
    section: 'mcp',
    meaning:
      "Characters of one tool answer (its JSON) at most: rows are dropped from the end until it fits, and it says `truncated: true`. Keeps an answer inside an assistant's context window.",
  },
  MCP_MAX_SESSIONS: {
    section: 'mcp',
    meaning:
      'MCP sessions this process keeps open at once; a new one past it closes the one idle longest (its client initializes again).',
  },
  MCP_SESSION_IDLE_MS: {
    section: 'mcp',
    meaning: 'An MCP session unused this long is closed (30 minutes by default); its calls stay in the log.',
  },
  A2A_ENABLED: {
    section: 'a2a',
    meaning: '`false`: no A2A server (`/a2a/…` answers 404).',
  },
  TRUST_PROXY: {
    section: 'auth',
    meaning:
      "Express's `trust proxy` (`1`, `loopback`, a list of addresses): whose `X-Forwarded-For` and `X-Forwarded-Proto` to believe, for the client address that rate limits and actors name and for `COOKIE_SECURE=auto`. Unset: nobody's.",
  },
  EVENT_STORE_URL: {
    section: 'log',
    meaning:
      'Unset: the SQLite file `$DATA_DIR/events.sqlite` (one process only). `postgres://user@host:5432/db`: the shared PostgreSQL log (scale-out). `sqlite:/path/file.sqlite`: another SQLite file.',
  },
  DUCKDB_FILE: {
    section: 'log',
    meaning: 'The read model; `:memory:` works too (rebuilt from the log at each start).',
    whenUnset: '`$DATA_DIR/projections.duckdb`',
  },
  PROJECTION_POLL_MS: {
    section: 'log',
    meaning:
      'How often a process looks for events written by other processes. On PostgreSQL it hears of them at once (`PROJECTION_LISTEN`), so polling is the fallback for a lost notification.',
    whenUnset: '`200` on PostgreSQL, `0` on SQLite',
  },
  PROJECTION_LISTEN: {
    section: 'log',
    meaning:
      "PostgreSQL: each process LISTENs for the log's appends (one connection, reconnected with back-off) and catches up at once. `false`: polling alone (e.g. behind a connection pooler in transaction mode, where LISTEN does not work).",
  },
  PROJECTION_BATCH_SIZE: { section: 'log', meaning: 'Events per DuckDB transaction when catching up.' },
  PROJECTION_BATCH_PAUSE_MS: {
    section: 'log',
    meaning:
      "The pause before a batch nobody waits for, right after another: what is appended meanwhile joins it (most of a small batch's cost in DuckDB is per batch, not per event). A read or a writer waiting for a position ends the pause at once. With SQLite (the log's sole writer: nothing it did not append can arrive meanwhile) the pause is eight times this.",
  },
  PROJECTION_PROGRESS_FROM_EVENTS: {
    section: 'log',
    meaning:
      'A start at least this many log positions behind the log (a read model rebuilt, a node new to a long log) logs its progress while it catches up: `the read model is catching up with the log`, then `the read model caught up with the log`, with `applied`, `total`, `eventsPerSecond` and `secondsLeft`. A start nearer the head logs neither.',
  },
  PROJECTION_PROGRESS_EVERY_MS: {
    section: 'log',
    meaning:
      'How often such a start logs `the read model is catching up with the log`, at most (after a batch); `0`: after every batch.',
  },
  PROJECTION_SKIP: {
    section: 'log',
    meaning:
      "`<position>:<projection>` pairs, comma-separated: that projection passes over that event. The operator's way past an event a projection cannot apply, without editing the log (see [When the read model stops](operating.md#when-the-read-model-stops-at-an-event)). Part of the read model's fingerprint, so a change rebuilds it.",
    whenUnset: 'unset',
  },
  PROJECTION_WAIT_MS: {
    section: 'log',
    meaning:
      "How long a write waits for its events to reach the read model; past it the answer is 202 with the event's position.",
  },
  READY_MAX_LAG_EVENTS: {
    section: 'log',
    meaning:
      "How many log positions this process's read model may trail the log's head while `GET /api/ready` still says ready (one batch: another node's writes arrive every `PROJECTION_POLL_MS`).",
  },
  READ_MIN_POSITION_WAIT_MS: {
    section: 'log',
    meaning:
      'How long a request naming a log position (`X-Min-Log-Position`, `?min_position=`), or a read after a write this process answered ahead of its read model, waits for the read model to include it; past it the answer is 503 with `Retry-After`.',
  },
  MAX_JSON_DEPTH: {
    section: 'serving',
    meaning:
      'Deepest nesting of a free-form JSON value an event may hold (params, options, parameters); deeper is a 400 naming the field.',
  },
  MAX_EVENT_BYTES: {
    section: 'serving',
    meaning: 'Largest event, as JSON (1 MiB; uploaded bytes are not in events); larger is a 400.',
  },
  SQL_TIMEOUT_MS: {
    section: 'sql',
    meaning: 'A SQL query running longer is interrupted and answers error 3024.',
  },
  PREDICTION_THREADS: {
    section: 'sql',
    meaning:
      "Threads a prediction of 512 rows or more walks its model's trees on (this process's own thread and `PREDICTION_THREADS - 1` workers, started by the first such prediction); `1` keeps every prediction on the process's thread.",
    whenUnset: "the machine's cores (`os.availableParallelism()`)",
  },
  SQL_ROW_LIMIT: {
    section: 'sql',
    meaning: 'Rows a SQL answer carries at most; a longer answer says `"truncated": true`.',
  },
  SQL_MAX_LIST_PARAM: {
    section: 'sql',
    meaning:
      'Items the list parameters of one SQL query (`IN :ids`) may hold together, each list bound as one value; more is error 1153 naming the limit.',
  },
  SQL_MAX_PARAMS: {
    section: 'sql',
    meaning:
      'Distinct parameters one SQL statement may bind (HTTP `params` and `:name`, MySQL `?`, PostgreSQL `$n`), checked before anything is bound; more is error 1153 over HTTP, 1390 at a MySQL PREPARE, SQLSTATE 54023 at a PostgreSQL Parse.',
  },
  SQL_MAX_QUERY_BYTES: {
    section: 'sql',
    meaning:
      'Largest SQL text in UTF-8 bytes (256 KiB); larger is error 1153. It bounds the planning DuckDB does without heeding interrupts (240 KB of OR: 3 s).',
  },
  SQL_MAX_ANSWER_BYTES: {
    section: 'sql',
    meaning:
      'Bytes (UTF-8 JSON) the rows of one SQL answer may take (64 MiB); rows are read in chunks and the answer stops there, saying `"truncated": true`.',
  },
  SQL_MAX_CONCURRENT: {
    section: 'sql',
    meaning:
      "Pooled readers SQL queries may hold at once, so the API's own reads always find one; more queries wait for a slot, then error 1040. A value set here is kept between 1 and `DUCKDB_READERS`.",
    whenUnset: '`DUCKDB_READERS` − 1, at most `UV_THREADPOOL_SIZE` − 2',
  },
  SQL_MAX_WAITING_OUTSIDE: {
    section: 'sql',
    meaning:
      "SQL queries that may wait at once on something outside the process (an LLM provider, embeddings, a URL, an integration's rows being copied in) with their reader set aside: meanwhile such a query holds no slot of `SQL_MAX_CONCURRENT` and its connection does not count in `DUCKDB_READERS`, so other queries run. Each keeps its DuckDB connection (its temporary tables) and what it fetches waits in memory until loaded, hence the bound; one more is error 1040 (server busy). Of them, at most `SQL_MAX_CONCURRENT` copy an integration's rows at once (each up to 1,000,000 rows in memory).",
    whenUnset: '4 × `SQL_MAX_CONCURRENT` (or its default)',
  },
  SQL_MAX_PROCESS_MEMORY: {
    section: 'sql',
    meaning:
      "Resident memory of the process past which running SQL queries that grew it are stopped (error 1153): what DuckDB's own limit does not see. A size (`4GB`), a share (`40%`), or `0` (no watch).",
    whenUnset: '`DUCKDB_MEMORY_LIMIT` + 1 GiB',
  },
  SQL_MAX_VALUE_BYTES: {
    section: 'sql',
    meaning:
      'The largest value `repeat`, `lpad`, `rpad` (bytes) and `range`, `generate_series`, `list_resize`, `array_resize` (8 bytes an item) may make in a query; past it, error 1153 (a `printf` or `format` width of a million or more is refused too).',
  },
  DUCKDB_THREADS: { section: 'sql', meaning: 'DuckDB worker threads.', whenUnset: 'all cores' },
  DUCKDB_READERS: {
    section: 'sql',
    meaning:
      "Pooled DuckDB connections for reads, at most (the projection writer has its own); each is made when reads first need it. `npm start` sizes libuv's thread pool (`UV_THREADPOOL_SIZE`) to this + 5 unless you set it.",
  },
  DUCKDB_ACQUIRE_TIMEOUT_MS: {
    section: 'sql',
    meaning:
      'A read that waits longer for a pooled connection answers 503 (REST, with `Retry-After`) or SQL error 1040 (server busy).',
  },
  DUCKDB_MEMORY_LIMIT: {
    section: 'sql',
    meaning:
      "DuckDB's `memory_limit`: a size (`2GB`, `512MiB`) or a share of the memory (the cgroup limit if any). Past it, work spills to `$DATA_DIR/duckdb.tmp`, and a query that cannot spill fails with error 1153. Room is kept for the read model's writer: a query whose unspillable memory (aggregate states) passes the limit less a fifth of it (64 MiB at least) is stopped with 1153, and a batch commits only with at most half the limit held. It bounds DuckDB's buffer manager only, hence a fifth, not half.",
    whenUnset: '`20%`',
  },
  FILE_UPLOAD_MAX_BYTES: {
    section: 'data',
    meaning: 'Largest uploaded file (1 GiB); larger is a 413.',
  },
  FILE_MAX_COLUMNS: {
    section: 'data',
    meaning: 'An uploaded file with more columns is refused (400 naming the limit).',
  },
  DOCUMENT_MAX_BYTES: {
    section: 'data',
    meaning:
      'Largest document (PDF, DOCX, HTML, Markdown, text) converted into a file table, or by `TO_MARKDOWN()`; larger is a 400 naming it.',
  },
  DOCUMENT_MAX_PAGES: {
    section: 'data',
    meaning: 'A PDF with more pages is refused (400 naming the limit) before any page is read.',
  },
  DOCUMENT_MAX_SECTIONS: {
    section: 'data',
    meaning: 'A converted document with more sections (headings, blocks of paragraphs) is refused.',
  },
  DOCUMENT_MAX_UNZIPPED_BYTES: {
    section: 'data',
    meaning:
      "What a DOCX's zip entries may inflate to, together: checked on the declared sizes, then while inflating (a zip bomb stops at the limit).",
  },
  DOCUMENT_MAX_DEPTH: {
    section: 'data',
    meaning: 'How deep the elements of an HTML (or a DOCX) may nest.',
  },
  DOCUMENT_TIMEOUT_MS: {
    section: 'data',
    meaning:
      'A document conversion still running after this is stopped (its worker thread terminated) and refused.',
  },
  DOCUMENT_MAX_MEMORY_MB: {
    section: 'data',
    meaning:
      "The heap of a document conversion's worker thread; past it, the conversion is stopped and refused.",
  },
  FILE_URL_UPLOAD: {
    section: 'data',
    meaning: 'Allow `PUT /api/files/{name}` with `{"source_type": "url", "source": …}`.',
  },
  DB_CONNECT_TIMEOUT_MS: {
    section: 'data',
    meaning:
      "Connecting to an external database gives up after this, or after `SQL_TIMEOUT_MS` when that is shorter (a statement's connection attempt never holds a pool slot past the statement's own limit).",
  },
  DB_HOST_ALLOWLIST: {
    section: 'data',
    meaning:
      "Comma-separated hosts external databases may be on: names, `*.suffix`, addresses, CIDR blocks (`10.0.0.0/8`). Unset: any host that passes `OUTBOUND_ALLOW`, and a failed connection is reported without the driver's reason (logged with the request id) so registration cannot scan the network. Set: the whole rule for database hosts (private addresses included), other hosts are a 403, and reasons are shown.",
  },
  OUTBOUND_ALLOW: {
    section: 'data',
    meaning:
      'Hosts, `*.suffix` names, addresses, CIDR blocks (`127.0.0.1,10.0.0.0/8`) that outbound calls (LLM, embeddings, webhooks, Slack and Telegram, file URLs, database hosts without `DB_HOST_ALLOWLIST`) may reach besides public addresses. With sign-in on, Ollama on localhost needs `127.0.0.1`.',
  },
  OUTBOUND_LOCAL_FIRST: {
    section: 'data',
    meaning:
      'While sign-in is off (no admin yet: the service serves loopback only), outbound calls reach loopback and private addresses (`127.0.0.0/8`, `::1`, `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, `fc00::/7`) too: a local database or a local LLM works at once. Followed live: once an admin exists, only public addresses and `OUTBOUND_ALLOW`. `false`: that policy with sign-in off too.',
  },
  TRAIN_ROW_LIMIT: { section: 'agents', meaning: 'Rows a training query may return.' },
  OPENAI_BASE_URL: {
    section: 'agents',
    meaning:
      "Where model calls go when an agent (or its ML engine) names no base URL: any OpenAI-compatible API (OpenAI, Azure-style gateways, Ollama, vLLM, LM Studio, LiteLLM). Unset: OpenAI's own.",
  },
  OPENAI_API_KEY: {
    section: 'agents',
    meaning:
      'The key for calls that name no key of their own; sent to `OPENAI_BASE_URL` (or OpenAI) only, never to a `base_url` a resource names.',
  },
  LLM_DEFAULT_MODEL: { section: 'agents', meaning: 'The model of an agent that names none.' },
  LLM_REQUEST_TIMEOUT_MS: {
    section: 'agents',
    meaning:
      'One model call (a stream: the longest silence between chunks); 429 and 5xx are retried with back-off.',
  },
  AGENT_SQL_CONCURRENCY: {
    section: 'agents',
    meaning:
      'Questions one SQL query asks an agent at once (`SELECT … FROM t JOIN p.agent`), and the cases one `EVALUATE AGENT` asks at once.',
  },
  AGENT_SQL_MAX_ROWS: {
    section: 'agents',
    meaning: 'Questions one SQL query may ask an agent; more is error 1153 before anything is asked.',
  },
  AGENT_SQL_TIMEOUT_MS: {
    section: 'agents',
    meaning: 'A SQL query that asks an agent may run this long (instead of `SQL_TIMEOUT_MS`).',
  },
  LLM_SQL_CONCURRENCY: {
    section: 'agents',
    meaning:
      'Provider requests one SQL query makes to an LLM at once (an LLM model queried or joined, `LLM()`): the bound on its rows per second. See [LLM models](llm-models.md).',
  },
  LLM_SQL_MAX_CALLS: {
    section: 'agents',
    meaning:
      'Provider requests one SQL query may make to LLMs (distinct prompts not in the answer cache, up to 16 rows a request when batched: see [LLM models](llm-models.md)); more is error 1153 before any call. The default lets a 10,000-row query run.',
  },
  LLM_SQL_TIMEOUT_MS: {
    section: 'agents',
    meaning: 'A SQL query that calls an LLM may run this long (instead of `SQL_TIMEOUT_MS`).',
  },
  LLM_CACHE_ENTRIES: {
    section: 'agents',
    meaning:
      "Answers kept in this process's LLM answer cache, by prompt hash, provider, model and options (0: no cache). A cached answer is recorded with `CACHED = true`, no call, no tokens.",
  },
  LLM_CACHE_TTL_MS: { section: 'agents', meaning: 'How long a cached LLM answer is reused.' },
  LLM_FUNCTION_MODEL_NAME: {
    section: 'agents',
    meaning: "The model `LLM()` asks (MindsDB's variable).",
    whenUnset: '`LLM_DEFAULT_MODEL`',
  },
  LLM_FUNCTION_BASE_URL: {
    section: 'agents',
    meaning: 'Where `LLM()` calls go (an OpenAI-compatible API).',
    whenUnset: '`OPENAI_BASE_URL` (or OpenAI)',
  },
  LLM_FUNCTION_API_KEY: {
    section: 'agents',
    meaning:
      'The key `LLM()` sends with its calls (to `LLM_FUNCTION_BASE_URL`, or `OPENAI_BASE_URL` when that is unset); unset, `OPENAI_API_KEY` goes with them only when they go to `OPENAI_BASE_URL`.',
  },
  LLM_FUNCTION_TEMPERATURE: {
    section: 'agents',
    meaning: "`LLM()`'s temperature (the provider's default when unset).",
  },
  LLM_FUNCTION_MAX_TOKENS: { section: 'agents', meaning: "`LLM()`'s answer length limit, in tokens." },
  MYSQL_PORT: {
    section: 'mysql',
    meaning: "The MySQL wire protocol (MindsDB's port), bound like `HOST`; `0` turns it off.",
  },
  MYSQL_TLS_CERT: {
    section: 'mysql',
    meaning:
      'PEM file of the certificate the MySQL door serves TLS with (with `MYSQL_TLS_KEY`: both or neither). Unset: a self-signed one (ECDSA P-256) made on first start and kept in `$DATA_DIR/tls/server-cert.pem`, so TLS is always offered.',
  },
  MYSQL_TLS_KEY: {
    section: 'mysql',
    meaning:
      "PEM file of that certificate's key (with `MYSQL_TLS_CERT`). Unset: `$DATA_DIR/tls/server-key.pem`, made with the certificate.",
  },
  MYSQL_MAX_CONNECTIONS: {
    section: 'mysql',
    meaning: 'MySQL connections at once; more are refused with error 1040.',
  },
  MYSQL_MAX_PREAUTH: {
    section: 'mysql',
    meaning:
      'MySQL connections not signed in yet, at once; they do not count against `MYSQL_MAX_CONNECTIONS`. Past it, the oldest one of the address holding the most is dropped (a newcomer always gets its turn).',
  },
  MYSQL_MAX_PREAUTH_PER_ADDRESS: {
    section: 'mysql',
    meaning: "Of those, from one client address; past it, that address's oldest is dropped.",
  },
  MYSQL_PREAUTH_TIMEOUT_MS: {
    section: 'mysql',
    meaning: 'A MySQL client not signed in by then is disconnected.',
  },
  PG_PORT: {
    section: 'postgres',
    meaning: "The PostgreSQL wire protocol (MindsDB's PostgreSQL port), bound like `HOST`; `0` turns it off.",
  },
  PG_TLS_CERT: {
    section: 'postgres',
    meaning:
      'PEM file of a certificate (with `PG_TLS_KEY`: both or neither): clients may switch to TLS (`psql sslmode=require`). With authentication on, passwords are taken only over TLS or from a loopback address.',
  },
  PG_TLS_KEY: { section: 'postgres', meaning: "PEM file of that certificate's key (with `PG_TLS_CERT`)." },
  PG_MAX_CONNECTIONS: {
    section: 'postgres',
    meaning: 'PostgreSQL connections at once; more are refused with SQLSTATE 53300.',
  },
  PG_MAX_PREAUTH: {
    section: 'postgres',
    meaning:
      'PostgreSQL connections not signed in yet, at once; they do not count against `PG_MAX_CONNECTIONS`. Past it, the oldest one of the address holding the most is dropped (a newcomer always gets its turn).',
  },
  PG_MAX_PREAUTH_PER_ADDRESS: {
    section: 'postgres',
    meaning: "Of those, from one client address; past it, that address's oldest is dropped.",
  },
  PG_PREAUTH_TIMEOUT_MS: {
    section: 'postgres',
    meaning: 'A PostgreSQL client not signed in by then is disconnected.',
  },
  PG_CATALOG_TIMEOUT_MS: {
    section: 'postgres',
    meaning:
      "A `pg_catalog` query (psql's `\\d`, tools' schema browsers) runs at most this long (then SQLSTATE 57014), and waits at most this long for a free catalog process.",
  },
  PG_CATALOG_MEMORY_MB: {
    section: 'postgres',
    meaning:
      "How far a `pg_catalog` query may grow its catalog process (DuckDB's `memory_limit` there too); past it the process is killed and the query fails with SQLSTATE 53200.",
  },
  PG_CATALOG_PROCESSES: {
    section: 'postgres',
    meaning: 'Catalog processes (`pg_catalog` queries running at once); one user holds at most all but one.',
  },
  CHATBOT_PROCESSOR: {
    section: 'chatbots',
    meaning:
      "This process answers chatbots' messages (and long-polls Telegram). Every process may: claims share the work.",
  },
  CHATBOT_LEASE_MS: {
    section: 'chatbots',
    meaning:
      "How long a process's claim on a message holds, and so the longest an answer or a delivery may take: one still running then is abandoned and tried again (as a failed one is); a process killed mid-answer leaves the message to another after this.",
  },
  CHATBOT_POLL_MS: {
    section: 'chatbots',
    meaning: 'How often a process looks for messages to answer (a message posted to it wakes it at once).',
  },
  CHATBOT_CONCURRENCY: {
    section: 'chatbots',
    meaning: 'Messages one process answers at once (one per chat: a chat is answered in order).',
  },
  CHATBOT_MAX_ATTEMPTS: {
    section: 'chatbots',
    meaning: 'Tries to answer a message before it is given up (`last_error` says why).',
  },
  CHATBOT_MAX_DELIVERIES: {
    section: 'chatbots',
    meaning: 'Tries to deliver an answer before the message is given up (`last_error` says why).',
  },
  CHATBOT_RETRY_BASE_MS: {
    section: 'chatbots',
    meaning: "First back-off between tries (doubling, jittered); a channel's `Retry-After` wins.",
  },
  CHATBOT_RETRY_MAX_MS: { section: 'chatbots', meaning: 'Longest back-off between tries.' },
  CHATBOT_WAIT_MS: {
    section: 'chatbots',
    meaning: 'How long `POST …/messages?wait=true` waits for the answer (then 202).',
  },
  CHATBOT_MEMORY_MESSAGES: {
    section: 'chatbots',
    meaning: 'Earlier messages of the chat (and their answers) the agent is given as memory.',
  },
  CHATBOT_TELEGRAM_POLL_SECONDS: { section: 'chatbots', meaning: 'Telegram `getUpdates` long-poll time.' },
  SLACK_API_BASE_URL: {
    section: 'chatbots',
    meaning: 'Where the Slack Web API is (tests point it at a local stand-in).',
  },
  TELEGRAM_API_BASE_URL: {
    section: 'chatbots',
    meaning: 'Where the Telegram Bot API is (tests point it at a local stand-in).',
  },
  JOBS_POLL_MS: {
    section: 'jobs',
    meaning:
      'How often a process looks for due jobs (every process does; a run is claimed per tick through the log, so each tick runs once); `0`: never.',
  },
  JOBS_LEASE_MS: {
    section: 'jobs',
    meaning:
      "How long a job run's claim holds; a run still open after it (its process died) is closed as abandoned by the next tick's claim.",
  },
  TRIGGERS_POLL_MS: {
    section: 'jobs',
    meaning:
      "How often a process reads its triggers' queues in their PostgreSQL sources (every process does; new rows are claimed through the log, so each fires once); `0`: never.",
  },
  LEDGER_SIGNING_KEY: {
    section: 'ledger',
    meaning:
      "The Ed25519 key that signs checkpoints: PEM, base64 seed, or a file path (created mode 0600 on first start). All processes on one PostgreSQL log must share it, or list the others' public keys in `LEDGER_TRUSTED_KEYS`.",
    whenUnset: '`$DATA_DIR/ledger-signing-key.pem`',
  },
  LEDGER_TRUSTED_KEYS: {
    section: 'ledger',
    meaning: "Comma-separated public keys of other processes' signing keys whose checkpoints are trusted.",
  },
  LEDGER_ORIGIN: { section: 'ledger', meaning: 'The origin line of the signed checkpoints.' },
  LEDGER_CHECKPOINT_EVENTS: {
    section: 'ledger',
    meaning: 'A checkpoint is signed once this many events wait to be signed.',
  },
  LEDGER_CHECKPOINT_MS: {
    section: 'ledger',
    meaning: 'Or sooner: when this long has passed since the last checkpoint and events wait to be signed.',
  },
  LEDGER_CHECKPOINT_ON_STOP: { section: 'ledger', meaning: 'Sign a checkpoint at a clean stop.' },
  LEDGER_WITNESS_DIR: {
    section: 'ledger',
    meaning:
      "Where every checkpoint a node sees is appended (`checkpoints.jsonl`). In production, outside the database's host and volume: see [The witness](operating.md#the-witness).",
    whenUnset: '`$DATA_DIR/ledger-witness`',
  },
  LEDGER_MASTER_KEY: {
    section: 'ledger',
    meaning:
      "The master key that wraps secrets' data keys: the key itself (32 bytes as base64), or `file:<path>` of its file. Set this or `LEDGER_MASTER_KEY_FILE`, not both. Every process on one PostgreSQL log needs the same master key.",
  },
  LEDGER_MASTER_KEY_FILE: {
    section: 'ledger',
    meaning:
      'The file holding the master key (created mode 0600 on first start). A path is never read as a key: a `LEDGER_MASTER_KEY` that looks like a path, or a `LEDGER_MASTER_KEY_FILE` that looks like a key, stops the start naming the variable to use.',
    whenUnset: '`$DATA_DIR/ledger-master-key`',
  },
  LEDGER_RETIRED_MASTER_KEYS: {
    section: 'ledger',
    meaning:
      'Comma-separated earlier master keys (base64 keys or `file:<path>`): data keys they wrapped still open. To rotate, start with the new key and list the old one here.',
  },
};

/** Settings read outside the schema, by one tool or by Node itself. */
const READ_ELSEWHERE = [
  '`USER_PASSWORD`: the password `npm run user -- add` and `passwd` take (else they read it from stdin; never an argument).',
  "`UV_THREADPOOL_SIZE`: libuv's thread pool; `npm start` sets it to `DUCKDB_READERS` + 5 when it is unset (`npm run dev`, under tsx, keeps Node's 4).",
];

type JsonSchemaProperty = {
  type?: string;
  enum?: readonly string[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
};

const BOOLEAN_WORDS = ['0', '1', 'false', 'true'];

const typeOf = (p: JsonSchemaProperty): string => {
  if (p.enum) {
    const words = [...p.enum].sort();
    if (words.join() === BOOLEAN_WORDS.join()) return 'boolean';
    return p.enum.map((w) => `\`${w}\``).join(', ');
  }
  if (p.type === 'integer' || p.type === 'number') {
    const name = p.type === 'integer' ? 'integer' : 'number';
    const max = p.maximum !== undefined && p.maximum < Number.MAX_SAFE_INTEGER ? p.maximum : undefined;
    if (p.minimum !== undefined && max !== undefined) return `${name}, ${p.minimum} to ${max}`;
    if (p.minimum !== undefined) return `${name} ≥ ${p.minimum}`;
    if (max !== undefined) return `${name} ≤ ${max}`;
    return name;
  }
  if (p.format === 'uri') return 'URL';
  return 'text';
};

const defaultOf = (p: JsonSchemaProperty, entry: Entry): string => {
  if (entry.whenUnset !== undefined) return entry.whenUnset;
  if (p.default === undefined) return 'unset';
  return `\`${String(p.default)}\``;
};

/** A table cell: one line, and a pipe that is text rather than a column break. */
const cell = (text: string) => text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');

/** Columns padded as prettier pads them, so `prettier --check` leaves the generated page alone. */
const table = (header: readonly string[], rows: readonly (readonly string[])[]) => {
  const width = (s: string) => [...s].length;
  const widths = header.map((h, i) => Math.max(3, width(h), ...rows.map((r) => width(r[i]!))));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c + ' '.repeat(widths[i]! - width(c))).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
};

/** The page docs/configuration.md holds: a pure function of the schema and the entries above. */
export const configurationDoc = (): string => {
  const schema = z.toJSONSchema(envSchema, { io: 'input' }) as {
    properties: Record<string, JsonSchemaProperty>;
  };
  const variables = Object.keys(ENTRIES) as Variable[];
  const parts = [
    '# Configuration',
    '',
    '<!-- Generated from src/config/environment.ts by `npx tsx src/cli/configDocs.ts > docs/configuration.md`. Do not edit by hand: change the schema, or the text in src/cli/configDocs.ts, and run it again. test/docs/configuration.spec.ts fails when this page is out of date. -->',
    '',
    'The service reads its settings from environment variables, once, at start. A value that does not fit its type stops the start with `Invalid configuration: <VARIABLE>: <why>`; so do pairs given half (`AUTH_USERNAME` without `AUTH_PASSWORD`, a TLS certificate without its key) and `LEDGER_MASTER_KEY` given with `LEDGER_MASTER_KEY_FILE`. A boolean is `true` or `false` (`1` and `0` work too). Sizes in bytes are plain numbers (`1048576`), except where a variable says it takes a size such as `2GB`.',
    '',
  ];
  for (const [id, section] of Object.entries(SECTIONS) as [Section, (typeof SECTIONS)[Section]][]) {
    const rows = variables
      .filter((v) => ENTRIES[v].section === id)
      .map((v) => {
        const property = schema.properties[v];
        if (!property) throw new Error(`${v} has an entry but is not in the schema`);
        return [`\`${v}\``, typeOf(property), defaultOf(property, ENTRIES[v]), ENTRIES[v].meaning].map(cell);
      });
    parts.push(
      `## ${section.title}`,
      '',
      section.intro,
      '',
      table(['variable', 'type', 'default', 'meaning'], rows),
      '',
    );
  }
  parts.push('## Read elsewhere', '', ...READ_ELSEWHERE.map((line) => `- ${line}`), '');
  return parts.join('\n');
};

if (require.main === module) process.stdout.write(configurationDoc());
