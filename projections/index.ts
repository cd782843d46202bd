import { withHistoryTables } from '../src/projection/history';
import { agentRunsTable, agentStepsTable } from '../src/agentRuns/projection';
import { agentsTable } from '../src/agents/projection';
import { agentEvaluationCasesTable, agentEvaluationsTable } from '../src/agents/evaluationProjection';
import { ledgerLeavesTable, ledgerTreeTable } from '../src/audit/ledgerProjection';
import { chatbotsTable } from '../src/chatbots/projection';
import { chatMessagesTable } from '../src/chatMessages/projection';
import { databasesTable } from '../src/databases/projection';
import { filesTable } from '../src/files/projection';
import { jobRunsTable, jobsTable } from '../src/jobs/projection';
import { viewsTable } from '../src/views/projection';
import { triggersTable } from '../src/triggers/projection';
import { knowledgeBasesTable } from '../src/knowledgeBases/projection';
import { knowledgeBaseEvaluationsTable } from '../src/knowledgeBases/evaluationProjection';
import { mlEnginesTable } from '../src/mlEngines/projection';
import { mcpCallsTable } from '../src/mcp/projection';
import { llmCallsTable } from '../src/llmCalls/projection';
import { llmBudgetsTable } from '../src/llmBudgets/projection';
import { modelsTable } from '../src/models/projection';
import type { TableProjection } from '../src/projection/types';
import { projectsTable } from '../src/projects/projection';
import { skillsTable } from '../src/skills/projection';
import { accessTokensTable, sessionsTable, usersTable } from '../src/users/projection';
import { eventsProjection } from './events';

/**
 * Every DuckDB table the log feeds, in the order they apply each event (a projection may read the
 * rows of those before it, and those after it as they were before the event: skills reads an
 * agent's previous links). Each capability keeps its table beside the queries that read it
 * (`src/<capability>/projection.ts`); a new one is one line here. Changing any definition triggers
 * a rebuild on the next start.
 */
/** Every table projection, with the history tables of those that keep history (AS OF). */
export const allProjections: readonly TableProjection[] = withHistoryTables([
  eventsProjection,
  projectsTable,
  databasesTable,
  skillsTable,
  agentsTable,
  chatbotsTable,
  filesTable,
  modelsTable,
  mlEnginesTable,
  agentRunsTable,
  agentStepsTable,
  agentEvaluationsTable,
  agentEvaluationCasesTable,
  knowledgeBasesTable,
  knowledgeBaseEvaluationsTable,
  chatMessagesTable,
  usersTable,
  accessTokensTable,
  sessionsTable,
  ledgerTreeTable,
  ledgerLeavesTable,
  jobsTable,
  jobRunsTable,
  viewsTable,
  triggersTable,
  mcpCallsTable,
  llmCallsTable,
  llmBudgetsTable,
]);

export { fileTablesProjection } from '../src/files/projection';
export { knowledgeBaseContentProjection } from '../src/knowledgeBases/projection';
