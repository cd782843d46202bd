import type { TableProjection, TableReader } from '../projection/types';
import { maskSecrets } from '../shared/secrets';

/** `agent_runs`: one row per run (information_schema.AGENT_RUNS). */
export const agentRunsTable: TableProjection = {
  table: 'agent_runs',
  key: 'TRACE_ID',
  columns: [
    { name: 'TRACE_ID', type: 'VARCHAR' },
    { name: 'PROJECT', type: 'VARCHAR' },
    { name: 'AGENT', type: 'VARCHAR' },
    { name: 'QUESTION', type: 'VARCHAR' },
    { name: 'ANSWER', type: 'VARCHAR' },
    { name: 'STATUS', type: 'VARCHAR' },
    { name: 'ERROR_KIND', type: 'VARCHAR' },
    { name: 'ERROR', type: 'VARCHAR' },
    { name: 'STEPS', type: 'INTEGER' },
    { name: 'PROVIDER', type: 'VARCHAR' },
    { name: 'MODEL', type: 'VARCHAR' },
    { name: 'ENGINE', type: 'VARCHAR' },
    { name: 'SQL', type: 'VARCHAR[]' },
    { name: 'PROMPT_TOKENS', type: 'BIGINT' },
    { name: 'COMPLETION_TOKENS', type: 'BIGINT' },
    { name: 'TOTAL_TOKENS', type: 'BIGINT' },
    { name: 'MS', type: 'BIGINT' },
    { name: 'THREAD_ID', type: 'VARCHAR' },
    { name: 'VIA', type: 'VARCHAR' },
    { name: 'PROJECT_ID', type: 'BIGINT' },
    { name: 'AGENT_ID', type: 'BIGINT' },
    { name: 'AGENT_VERSION', type: 'BIGINT' },
    { name: 'STARTED_AT', type: 'TIMESTAMP' },
    { name: 'FINISHED_AT', type: 'TIMESTAMP' },
    { name: 'POSITION', type: 'BIGINT' },
  ],
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
        });
        return;
      }
      case 'AgentRunAnswered': {
        const d = event.data;
        const row = await rows.get(d.traceId);
        if (!row) return;
        rows.put({
          ...row,
          ANSWER: d.answer,
          STATUS: 'answered',
          STEPS: d.steps,
          SQL: maskSecrets(d.sql, 'sql'),
          PROMPT_TOKENS: d.usage?.promptTokens ?? null,
          COMPLETION_TOKENS: d.usage?.completionTokens ?? null,
          TOTAL_TOKENS: d.usage?.totalTokens ?? null,
          MS: d.ms,
          FINISHED_AT: d.answeredAt,
        });
        return;
      }
      case 'AgentRunFailed': {
        const d = event.data;
        const row = await rows.get(d.traceId);
        if (!row) return;
        rows.put({
          ...row,
          STATUS: 'failed',
          ERROR_KIND: d.kind,
          ERROR: d.message,
          STEPS: d.steps,
          PROMPT_TOKENS: d.usage?.promptTokens ?? null,
          COMPLETION_TOKENS: d.usage?.completionTokens ?? null,
          TOTAL_TOKENS: d.usage?.totalTokens ?? null,
          MS: d.ms,
          FINISHED_AT: d.failedAt,
        });
        return;
      }
    }
  },
};

/** `agent_steps`: every model call and tool call of every run, in order (information_schema.AGENT_STEPS). */
export const agentStepsTable: TableProjection = {
  table: 'agent_steps',
  key: null,
  columns: [
    { name: 'TRACE_ID', type: 'VARCHAR' },
    { name: 'SEQ', type: 'BIGINT' },
    { name: 'STEP', type: 'INTEGER' },
    { name: 'KIND', type: 'VARCHAR' },
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'OK', type: 'BOOLEAN' },
    { name: 'DETAIL', type: 'JSON' },
    { name: 'SQL', type: 'VARCHAR' },
    { name: 'ROW_COUNT', type: 'BIGINT' },
    { name: 'ERROR', type: 'VARCHAR' },
    { name: 'REJECTED', type: 'BOOLEAN' },
    { name: 'TOTAL_TOKENS', type: 'BIGINT' },
    { name: 'MS', type: 'BIGINT' },
    { name: 'RECORDED_AT', type: 'TIMESTAMP' },
  ],
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
    }
  },
};

export type AgentRunRow = {
  TRACE_ID: string;
  PROJECT: string;
  AGENT: string;
  QUESTION: string;
  ANSWER: string | null;
  STATUS: string;
  ERROR_KIND: string | null;
  ERROR: string | null;
  STEPS: number;
  PROVIDER: string;
  MODEL: string;
  ENGINE: string | null;
  SQL: string[];
  PROMPT_TOKENS: bigint | null;
  COMPLETION_TOKENS: bigint | null;
  TOTAL_TOKENS: bigint | null;
  MS: bigint | null;
  THREAD_ID: string | null;
  VIA: string;
  PROJECT_ID: bigint;
  AGENT_ID: bigint;
  STARTED_AT: Date;
  FINISHED_AT: Date | null;
  POSITION: bigint;
};

export type AgentStepRow = {
  TRACE_ID: string;
  SEQ: bigint;
  STEP: number;
  KIND: string;
  NAME: string;
  OK: boolean;
  DETAIL: string;
  SQL: string | null;
  ROW_COUNT: bigint | null;
  ERROR: string | null;
  REJECTED: boolean;
  TOTAL_TOKENS: bigint | null;
  MS: bigint | null;
  RECORDED_AT: Date;
};

export const runRowsOfAgent = async (
  reader: TableReader,
  projectId: number,
  agentId: number,
  page: { before?: bigint; limit: number },
) =>
  (await reader.query(
    `SELECT * FROM agent_runs WHERE PROJECT_ID = ? AND AGENT_ID = ?${page.before !== undefined ? ' AND POSITION < ?' : ''} ORDER BY POSITION DESC LIMIT ?`,
    [BigInt(projectId), BigInt(agentId), ...(page.before !== undefined ? [page.before] : []), page.limit],
  )) as AgentRunRow[];

export const runRow = async (reader: TableReader, traceId: string) =>
  ((await reader.query('SELECT * FROM agent_runs WHERE TRACE_ID = ?', [traceId])) as AgentRunRow[])[0];

export const stepRowsOfRun = async (reader: TableReader, traceId: string) =>
  (await reader.query('SELECT * FROM agent_steps WHERE TRACE_ID = ? ORDER BY SEQ', [
    traceId,
  ])) as AgentStepRow[];
