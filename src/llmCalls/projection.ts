import { tableProjection } from '../projection/table';
import { columns } from '../projection/columns';

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
  columns: columns(
    `QUERY_ID VARCHAR, SEQ BIGINT, PROJECT VARCHAR NULL, MODEL VARCHAR NULL, MODEL_VERSION INTEGER NULL,
    SOURCE VARCHAR, PROVIDER VARCHAR, PROVIDER_MODEL VARCHAR, ENGINE VARCHAR NULL, BASE_URL VARCHAR,
    PROMPT_HASH VARCHAR, PROMPT_CHARS BIGINT, CACHED BOOLEAN, OUTCOME VARCHAR, ERROR_KIND VARCHAR NULL,
    ERROR VARCHAR NULL, PROMPT_TOKENS BIGINT NULL, COMPLETION_TOKENS BIGINT NULL,
    TOTAL_TOKENS BIGINT NULL, LATENCY_MS BIGINT, RETRIES INTEGER, ACTOR VARCHAR, USER_NAME VARCHAR NULL,
    ROLE VARCHAR NULL, VIA VARCHAR, CALLED_AT TIMESTAMP, POSITION BIGINT`,
    /** The rows the request carried (JSON list of 1-based row numbers), null before batching. */
    'ROWS VARCHAR NULL',
  ),
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
