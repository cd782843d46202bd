import type { AgentRunAnswered, AgentRunFailed } from '../../events';
import { allHandled, selectRow, selectRows, tableProjection, type RowOf } from '../projection/table';
import { patchRow } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import { maskSecrets } from '../shared/secrets';

/** What a run's end says however it ended: its steps, the tokens it spent and how long it took. */
const endCells = (d: AgentRunAnswered['data'] | AgentRunFailed['data']) => ({
  STEPS: d.steps,
  PROMPT_TOKENS: d.usage?.promptTokens ?? null,
  COMPLETION_TOKENS: d.usage?.completionTokens ?? null,
  TOTAL_TOKENS: d.usage?.totalTokens ?? null,
  MS: d.ms,
});

/** `agent_runs`: one row per run (information_schema.AGENT_RUNS). */
export const agentRunsTable = tableProjection({
  table: 'agent_runs',
  // Changes with every call, run or batch: other answers are kept through it (readVersions.ts).
  activity: true,
  key: 'TRACE_ID',
  columns: columns(
    `TRACE_ID VARCHAR, PROJECT VARCHAR, AGENT VARCHAR, QUESTION VARCHAR, ANSWER VARCHAR NULL,
    STATUS VARCHAR, ERROR_KIND VARCHAR NULL, ERROR VARCHAR NULL, STEPS INTEGER, PROVIDER VARCHAR,
    MODEL VARCHAR, ENGINE VARCHAR NULL, SQL VARCHAR[], PROMPT_TOKENS BIGINT NULL,
    COMPLETION_TOKENS BIGINT NULL, TOTAL_TOKENS BIGINT NULL, MS BIGINT NULL, THREAD_ID VARCHAR NULL,
    VIA VARCHAR, PROJECT_ID BIGINT, AGENT_ID BIGINT, AGENT_VERSION BIGINT, STARTED_AT TIMESTAMP,
    FINISHED_AT TIMESTAMP NULL, POSITION BIGINT`,
    /** Who asked (`user:<id>`, `token:<id>`, `system`…) and their user name: whose LLM budgets the run's model calls count against. */
    'ACTOR VARCHAR NULL, USER_NAME VARCHAR NULL',
  ),
  handles: ['AgentRunStarted', 'AgentRunAnswered', 'AgentRunFailed'],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'AgentRunStarted': {
        const d = event.data;
        rows.put({
          TRACE_ID: d.traceId,
          PROJECT: d.project,
          AGENT: d.agent,
          QUESTION: d.question,
          ANSWER: null,
          STATUS: 'running',
          ERROR_KIND: null,
          ERROR: null,
          STEPS: 0,
          PROVIDER: d.llm.provider,
          MODEL: d.llm.model,
          ENGINE: d.llm.engine,
          SQL: [],
          PROMPT_TOKENS: null,
          COMPLETION_TOKENS: null,
          TOTAL_TOKENS: null,
          MS: null,
          THREAD_ID: d.threadId,
          VIA: d.via,
          PROJECT_ID: d.projectId,
          AGENT_ID: d.agentId,
          AGENT_VERSION: BigInt(d.agentVersion),
          STARTED_AT: d.startedAt,
          FINISHED_AT: null,
          POSITION: event.meta.position,
          ACTOR: d.caller?.actor ?? null,
          USER_NAME: d.caller?.user ?? null,
        });
        return;
      }
      case 'AgentRunAnswered': {
        const d = event.data;
        const sql = maskSecrets(d.sql, 'sql');
        const cells = { ANSWER: d.answer, STATUS: 'answered', SQL: sql, FINISHED_AT: d.answeredAt };
        return patchRow(rows, d.traceId, { ...cells, ...endCells(d) });
      }
      case 'AgentRunFailed': {
        const d = event.data;
        const cells = { STATUS: 'failed', ERROR_KIND: d.kind, ERROR: d.message, FINISHED_AT: d.failedAt };
        return patchRow(rows, d.traceId, { ...cells, ...endCells(d) });
      }
      default:
        return allHandled(event);
    }
  },
});

/** `agent_steps`: every model call and tool call of every run, in order (information_schema.AGENT_STEPS). */
export const agentStepsTable = tableProjection({
  table: 'agent_steps',
  // Changes with every call, run or batch: other answers are kept through it (readVersions.ts).
  activity: true,
  key: null,
  columns: columns(
    `TRACE_ID VARCHAR, SEQ BIGINT, STEP INTEGER, KIND VARCHAR, NAME VARCHAR, OK BOOLEAN, DETAIL JSON,
    SQL VARCHAR NULL, ROW_COUNT BIGINT NULL, ERROR VARCHAR NULL, REJECTED BOOLEAN,
    TOTAL_TOKENS BIGINT NULL, MS BIGINT NULL, RECORDED_AT TIMESTAMP`,
  ),
  handles: ['AgentRunModelCalled', 'AgentRunToolCalled'],
  apply: (event, rows) => {
    switch (event.type) {
      case 'AgentRunModelCalled': {
        const d = event.data;
        rows.put({
          TRACE_ID: d.traceId,
          SEQ: event.meta.streamPosition,
          STEP: d.step,
          KIND: 'model',
          NAME: d.model,
          OK: true,
          DETAIL: {
            finish_reason: d.finishReason,
            content: d.content,
            tool_calls: d.toolCalls,
            message_count: d.messageCount,
            tool_choice: d.toolChoice,
            retries: d.retries,
            usage: d.usage,
          },
          SQL: null,
          ROW_COUNT: null,
          ERROR: null,
          REJECTED: false,
          TOTAL_TOKENS: d.usage?.totalTokens ?? null,
          MS: d.latencyMs,
          RECORDED_AT: d.at,
        });
        return;
      }
      case 'AgentRunToolCalled': {
        const d = event.data;
        rows.put({
          TRACE_ID: d.traceId,
          SEQ: event.meta.streamPosition,
          STEP: d.step,
          KIND: 'tool',
          NAME: d.name,
          OK: d.ok,
          DETAIL: { call_id: d.callId, tool_kind: d.kind, arguments: d.arguments },
          SQL: maskSecrets(d.sql, 'sql'),
          ROW_COUNT: d.rows,
          ERROR: d.error,
          REJECTED: d.rejected,
          TOTAL_TOKENS: null,
          MS: d.ms,
          RECORDED_AT: d.at,
        });
        return;
      }
      default:
        return allHandled(event);
    }
  },
});

export type AgentRunRow = RowOf<typeof agentRunsTable.columns>;

export type AgentStepRow = RowOf<typeof agentStepsTable.columns>;

export const runRowsOfAgent = async (
  reader: TableReader,
  projectId: number,
  agentId: number,
  page: { before?: bigint; limit: number },
) =>
  selectRows(
    agentRunsTable,
    reader,
    `SELECT * FROM agent_runs WHERE PROJECT_ID = ? AND AGENT_ID = ?${page.before !== undefined ? ' AND POSITION < ?' : ''} ORDER BY POSITION DESC LIMIT ?`,
    [BigInt(projectId), BigInt(agentId), ...(page.before !== undefined ? [page.before] : []), page.limit],
  );

export const runRow = async (reader: TableReader, traceId: string) =>
  selectRow(agentRunsTable, reader, 'SELECT * FROM agent_runs WHERE TRACE_ID = ?', [traceId]);

export const stepRowsOfRun = async (reader: TableReader, traceId: string) =>
  selectRows(agentStepsTable, reader, 'SELECT * FROM agent_steps WHERE TRACE_ID = ? ORDER BY SEQ', [traceId]);
