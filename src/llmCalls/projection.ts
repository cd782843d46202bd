import { tableProjection } from '../projection/table';

/**
 * `llm_calls`: one row per answer an LLM gave a SQL query (information_schema.LLM_CALLS), so what
 * the LLMs cost, per model and per user, is a SQL query (LLM_USAGE). Neither prompt nor answer is
 * kept: the prompt's hash and length only.
 */
export const llmCallsTable = tableProjection({
  table: 'llm_calls',
  // Changes with every call, run or batch: other answers are kept through it (readVersions.ts).
  activity: true,
  key: null,
  columns: [
    { name: 'QUERY_ID', type: 'VARCHAR' },
    { name: 'SEQ', type: 'BIGINT' },
    { name: 'PROJECT', type: 'VARCHAR', nullable: true },
    { name: 'MODEL', type: 'VARCHAR', nullable: true },
    { name: 'MODEL_VERSION', type: 'INTEGER', nullable: true },
    { name: 'SOURCE', type: 'VARCHAR' },
    { name: 'PROVIDER', type: 'VARCHAR' },
    { name: 'PROVIDER_MODEL', type: 'VARCHAR' },
    { name: 'ENGINE', type: 'VARCHAR', nullable: true },
    { name: 'BASE_URL', type: 'VARCHAR' },
    { name: 'PROMPT_HASH', type: 'VARCHAR' },
    { name: 'PROMPT_CHARS', type: 'BIGINT' },
    { name: 'CACHED', type: 'BOOLEAN' },
    { name: 'OUTCOME', type: 'VARCHAR' },
    { name: 'ERROR_KIND', type: 'VARCHAR', nullable: true },
    { name: 'ERROR', type: 'VARCHAR', nullable: true },
    { name: 'PROMPT_TOKENS', type: 'BIGINT', nullable: true },
    { name: 'COMPLETION_TOKENS', type: 'BIGINT', nullable: true },
    { name: 'TOTAL_TOKENS', type: 'BIGINT', nullable: true },
    { name: 'LATENCY_MS', type: 'BIGINT' },
    { name: 'RETRIES', type: 'INTEGER' },
    { name: 'ACTOR', type: 'VARCHAR' },
    { name: 'USER_NAME', type: 'VARCHAR', nullable: true },
    { name: 'ROLE', type: 'VARCHAR', nullable: true },
    { name: 'VIA', type: 'VARCHAR' },
    { name: 'CALLED_AT', type: 'TIMESTAMP' },
    { name: 'POSITION', type: 'BIGINT' },
    /** The rows the request carried (JSON list of 1-based row numbers), null before batching. */
    { name: 'ROWS', type: 'VARCHAR', nullable: true },
  ],
  handles: ['LlmCallRecorded'],
  // One event type: every answer is a row of its own (the row's fields are the event's).
  apply: (event, rows) => {
    const d = event.data;
    rows.put({
      QUERY_ID: d.queryId,
      SEQ: BigInt(d.seq),
      PROJECT: d.project,
      MODEL: d.model,
      MODEL_VERSION: d.modelVersion,
      SOURCE: d.source,
      PROVIDER: d.provider,
      PROVIDER_MODEL: d.providerModel,
      ENGINE: d.engine,
      BASE_URL: d.baseUrl,
      PROMPT_HASH: d.promptHash,
      PROMPT_CHARS: BigInt(d.promptChars),
      CACHED: d.cached,
      OUTCOME: d.outcome,
      ERROR_KIND: d.errorKind,
      ERROR: d.error,
      PROMPT_TOKENS: d.usage === null ? null : BigInt(d.usage.promptTokens),
      COMPLETION_TOKENS: d.usage === null ? null : BigInt(d.usage.completionTokens),
      TOTAL_TOKENS: d.usage === null ? null : BigInt(d.usage.totalTokens),
      LATENCY_MS: BigInt(d.latencyMs),
      RETRIES: d.retries,
      ACTOR: d.caller.actor,
      USER_NAME: d.caller.user,
      ROLE: d.caller.role,
      VIA: d.via,
      CALLED_AT: d.calledAt,
      POSITION: event.meta.position,
      ROWS: d.rows === undefined ? null : JSON.stringify(d.rows),
    });
  },
});
