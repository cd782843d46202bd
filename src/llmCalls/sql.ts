import { ownProject, type SqlCatalog } from '../sql/handlers';

/**
 * information_schema.LLM_CALLS (every answer an LLM gave a query: a call, or the answer cache) and
 * LLM_USAGE (calls, cached answers, errors and tokens per project, model and user), so cost is a SQL
 * query. A token scoped to a project reads its project's.
 */
export const llmCallCatalog = {
  informationSchema: {
    LLM_CALLS: `SELECT QUERY_ID, SEQ, PROJECT, MODEL, MODEL_VERSION, SOURCE, PROVIDER, PROVIDER_MODEL, ENGINE, BASE_URL,
      PROMPT_HASH, PROMPT_CHARS, CACHED, OUTCOME, ERROR_KIND, ERROR, PROMPT_TOKENS, COMPLETION_TOKENS, TOTAL_TOKENS,
      LATENCY_MS, RETRIES, ACTOR, USER_NAME, ROLE, VIA, CALLED_AT, ROWS FROM main.llm_calls ORDER BY POSITION`,
    LLM_USAGE: `SELECT PROJECT, COALESCE(MODEL, 'LLM()') AS MODEL, PROVIDER, PROVIDER_MODEL, ACTOR, USER_NAME, ROLE,
      count(*) FILTER (WHERE NOT CACHED) AS CALLS, count(*) FILTER (WHERE CACHED) AS CACHED_ANSWERS,
      count(*) FILTER (WHERE OUTCOME = 'error') AS ERRORS, COALESCE(sum(PROMPT_TOKENS), 0) AS PROMPT_TOKENS,
      COALESCE(sum(COMPLETION_TOKENS), 0) AS COMPLETION_TOKENS, COALESCE(sum(TOTAL_TOKENS), 0) AS TOTAL_TOKENS,
      COALESCE(sum(LATENCY_MS) FILTER (WHERE NOT CACHED), 0) AS LATENCY_MS, max(CALLED_AT) AS LAST_CALLED_AT
      FROM main.llm_calls GROUP BY ALL ORDER BY PROJECT, MODEL, ACTOR`,
  },
  scopedRows: { llm_calls: ownProject },
} satisfies SqlCatalog;
