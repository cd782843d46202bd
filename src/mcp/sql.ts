import { ownProject, type SqlCatalog } from '../sql/handlers';

/**
 * information_schema.MCP_CALLS: every call assistants made over MCP, like AGENT_RUNS for agents. A
 * token scoped to a project reads the calls about its project.
 */
export const mcpCatalog = {
  informationSchema: {
    MCP_CALLS: `SELECT SESSION_ID, SEQ, METHOD, TARGET, ARGUMENTS, SQL, PROJECT, ACTOR, USER_NAME, ROLE, SCOPE, CLIENT_NAME,
      CLIENT_VERSION, PROTOCOL_VERSION, OUTCOME, ERROR, ROW_COUNT, TRUNCATED, ANSWER_HASH, TRACE_ID, MS, CALLED_AT,
      POSITION FROM main.mcp_calls ORDER BY POSITION`,
  },
  scopedRows: { mcp_calls: ownProject },
} satisfies SqlCatalog;
