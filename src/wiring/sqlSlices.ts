import { agentCatalog, agentEvaluationStatements, agentStatements } from '../agents/sql';
import { agentLookup, agentRunCatalog } from '../agentRuns/sql';
import { chatMessageCatalog } from '../chatMessages/sql';
import { chatbotCatalog, chatbotStatements } from '../chatbots/sql';
import { registrationsOf } from '../databases/projection';
import { databaseStatements, integrationLookup } from '../databases/sql';
import { fileLookup } from '../files/sql';
import { jobCatalog, jobStatements } from '../jobs/sql';
import {
  knowledgeBaseCatalog,
  knowledgeBaseLookup,
  knowledgeBaseRows,
  knowledgeBaseStatements,
} from '../knowledgeBases/sql';
import { mcpCatalog } from '../mcp/sql';
import { llmCallCatalog } from '../llmCalls/sql';
import { llmBudgetCatalog, llmBudgetStatements } from '../llmBudgets/sql';
import { mlEngineCatalog, mlEngineStatements } from '../mlEngines/sql';
import {
  createModelFromText,
  modelCatalog,
  modelLookup,
  modelStatements,
  type ModelSqlPorts,
} from '../models/sql';
import { projectLookup, projectStatements } from '../projects/sql';
import { skillCatalog, skillStatements } from '../skills/sql';
import { triggerCatalog, triggerStatements } from '../triggers/sql';
import { viewCatalog, viewLookup, viewStatements } from '../views/sql';
import type { SqlCatalog, SqlLookups } from '../sql/handlers';
import type { ModelView } from '../models/present';
import type { SliceServices } from './sqlPorts';
import type { SqlSlices } from '../sql/slicePorts';

/** What the models slice's statements need of the others (DROP MODEL drops a view, as MindsDB). */
const modelSqlPorts = (ports: SliceServices): ModelSqlPorts => ({
  models: ports.models,
  databaseExists: (name) => ports.databases.exists(name),
  views: {
    queryOf: (project, name) => ports.views.queryOf(project, name),
    remove: (project, name) => ports.views.remove(project, name, false),
  },
});

/**
 * Every capability's SQL statements, listed once: each slice's `sql.ts` exports its handlers. The
 * SQL service adds its own (SHOW, DESCRIBE, USE, SET, table writes) and the whole map is checked
 * complete by type there.
 */
const sliceStatements = (ports: SliceServices) => ({
  ...projectStatements(ports.projects),
  ...databaseStatements({ databases: ports.databases, createProject: (name) => ports.projects.create(name) }),
  ...skillStatements(ports.skills),
  ...agentStatements(ports.agents),
  ...agentEvaluationStatements(ports.agentEvaluations),
  ...chatbotStatements({
    chatbots: ports.chatbots,
    requireIntegration: (ref) => ports.databases.requireIntegration(ref),
  }),
  ...mlEngineStatements(ports.mlEngines),
  ...modelStatements(modelSqlPorts(ports)),
  ...knowledgeBaseStatements(ports.knowledgeBases),
  ...jobStatements(ports.jobs),
  ...viewStatements(ports.views),
  ...triggerStatements(ports.triggers),
  ...llmBudgetStatements(ports.llmBudgets),
});

/**
 * Every capability's tables as SQL shows them, listed once, in the order SHOW TABLES lists a
 * project's tables (MindsDB's) and information_schema lists its own.
 */
export const sliceCatalogs: readonly SqlCatalog[] = [
  modelCatalog,
  agentCatalog,
  skillCatalog,
  chatbotCatalog,
  jobCatalog,
  viewCatalog,
  knowledgeBaseCatalog,
  triggerCatalog,
  mlEngineCatalog,
  agentRunCatalog,
  chatMessageCatalog,
  mcpCatalog,
  llmCallCatalog,
  llmBudgetCatalog,
];

/** How each kind of name in a query is recognised, each by the slice that owns it, listed once. */
const sliceLookups = (ports: SliceServices): SqlLookups => ({
  ...projectLookup(ports.projects),
  ...fileLookup(ports.files),
  ...integrationLookup(ports.databases),
  ...modelLookup(ports.models),
  ...agentLookup(ports.agentRuns),
  ...knowledgeBaseLookup(ports.knowledgeBases),
  ...viewLookup(ports.views),
});

/**
 * What the SQL service is handed of the capabilities (src/sql imports none of them): their
 * statements, how their names are recognised, and the two statements REST runs through SQL, each
 * given the services it runs on.
 */
export const sqlSlicesOf = (ports: SliceServices): SqlSlices<ModelView> => ({
  statements: sliceStatements(ports),
  lookups: sliceLookups(ports),
  catalogs: sliceCatalogs,
  createModelFromText: createModelFromText(modelSqlPorts(ports)),
  knowledgeBaseRows: knowledgeBaseRows(ports.knowledgeBases),
  registrations: registrationsOf,
});
