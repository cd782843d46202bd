import type { AgentRunsService } from './service';
import { ownProject, type SqlCatalog, type SqlLookups } from '../sql/handlers';

/** information_schema.AGENT_RUNS and AGENT_STEPS: every agent run and each of its steps. */
export const agentRunCatalog = {
  informationSchema: {
    AGENT_RUNS: `SELECT TRACE_ID, PROJECT, AGENT, QUESTION, ANSWER, STATUS, ERROR_KIND, ERROR, STEPS, PROVIDER, MODEL,
      ENGINE, SQL, PROMPT_TOKENS, COMPLETION_TOKENS, TOTAL_TOKENS, MS, THREAD_ID, VIA, STARTED_AT, FINISHED_AT, USER_NAME, ACTOR
      FROM main.agent_runs ORDER BY POSITION`,
    AGENT_STEPS: `SELECT TRACE_ID, SEQ, STEP, KIND, NAME, OK, CAST(DETAIL AS VARCHAR) AS DETAIL, SQL, ROW_COUNT, ERROR,
      REJECTED, TOTAL_TOKENS, MS, RECORDED_AT FROM main.agent_steps ORDER BY RECORDED_AT, TRACE_ID, SEQ`,
  },
  scopedRows: {
    agent_runs: ownProject,
    agent_steps: (ofProject) => `TRACE_ID IN (SELECT TRACE_ID FROM main.agent_runs WHERE ${ofProject})`,
  },
  // Each run (state.ts `runStream`).
  projectStreams: (ofProject) =>
    `stream IN (SELECT 'agent-run-' || TRACE_ID FROM main.agent_runs WHERE ${ofProject})`,
} satisfies SqlCatalog;

/** An agent queried as a table answers (each answer a run of this slice). */
export const agentLookup = (agentRuns: Pick<AgentRunsService, 'findAgentName'>) =>
  ({
    isAgent: (project, name) => agentRuns.findAgentName(project, name),
  }) satisfies Pick<SqlLookups, 'isAgent'>;
