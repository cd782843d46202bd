import { tableProjection } from '../projection/table';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

/**
 * `mcp_calls`: one row per call an assistant made over MCP (information_schema.MCP_CALLS), so "what
 * did the assistant read last week" is a SQL query. The answer itself is not kept, only its hash.
 */
export const mcpCallsTable = tableProjection({
  table: 'mcp_calls',
  // Changes with every call, run or batch: other answers are kept through it (readVersions.ts).
  activity: true,
  key: null,
  columns: columns(
    `SESSION_ID VARCHAR, SEQ BIGINT, METHOD VARCHAR, TARGET VARCHAR, ARGUMENTS VARCHAR, SQL VARCHAR NULL,
    PROJECT VARCHAR NULL, ACTOR VARCHAR, USER_NAME VARCHAR NULL, ROLE VARCHAR NULL, SCOPE VARCHAR NULL,
    CLIENT_NAME VARCHAR NULL, CLIENT_VERSION VARCHAR NULL, PROTOCOL_VERSION VARCHAR NULL,
    OUTCOME VARCHAR, ERROR VARCHAR NULL, ROW_COUNT BIGINT NULL, TRUNCATED BOOLEAN, ANSWER_HASH VARCHAR,
    TRACE_ID VARCHAR NULL, MS BIGINT, CALLED_AT TIMESTAMP, POSITION BIGINT`,
  ),
  handles: ['McpCallRecorded'],
  // One event type: every call is a row of its own (the row's fields are the event's).
  apply: (event, rows) => {
    const d = event.data;
    rows.put({
      SESSION_ID: d.sessionId,
      SEQ: BigInt(d.seq),
      METHOD: d.method,
      TARGET: d.target,
      // Secrets sealed in place in the log read as the mask, as in every table.
      ARGUMENTS: maskSecrets(d.arguments),
      SQL: maskSecrets(d.sql, 'sql'),
      PROJECT: d.project,
      ACTOR: d.caller.actor,
      USER_NAME: d.caller.user,
      ROLE: d.caller.role,
      SCOPE: d.caller.scope,
      CLIENT_NAME: d.client?.name ?? null,
      CLIENT_VERSION: d.client?.version ?? null,
      PROTOCOL_VERSION: d.protocolVersion,
      OUTCOME: d.outcome,
      ERROR: d.error,
      ROW_COUNT: d.rowCount === null ? null : BigInt(d.rowCount),
      TRUNCATED: d.truncated,
      ANSWER_HASH: d.answerHash,
      TRACE_ID: d.traceId,
      MS: BigInt(d.ms),
      CALLED_AT: d.calledAt,
      POSITION: event.meta.position,
    });
  },
});
