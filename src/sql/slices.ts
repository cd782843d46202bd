import { agentCatalog, agentStatements } from '../agents/sql';
import { agentRunCatalog } from '../agentRuns/sql';
import { chatMessageCatalog } from '../chatMessages/sql';
import { chatbotCatalog, chatbotStatements } from '../chatbots/sql';
import { databaseStatements } from '../databases/sql';
import { jobCatalog, jobStatements } from '../jobs/sql';
import { knowledgeBaseCatalog, knowledgeBaseStatements } from '../knowledgeBases/sql';
import { mlEngineCatalog, mlEngineStatements } from '../mlEngines/sql';
import { modelCatalog, modelStatements, type ModelSqlPorts } from '../models/sql';
import { projectStatements } from '../projects/sql';
import { skillCatalog, skillStatements } from '../skills/sql';
import { triggerCatalog, triggerStatements } from '../triggers/sql';
import { viewCatalog, viewStatements } from '../views/sql';
import type { SqlCatalog } from './handlers';
import type { SqlPorts } from './ports';

/** What the models slice's statements need of the others (DROP MODEL drops a view, as MindsDB). */
export const modelSqlPorts = (ports: SqlPorts): ModelSqlPorts => ({
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
export const sliceStatements = (ports: SqlPorts) => ({
  ...projectStatements(ports.projects),
  ...databaseStatements({ databases: ports.databases, createProject: (name) => ports.projects.create(name) }),
  ...skillStatements(ports.skills),
  ...agentStatements(ports.agents),
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
];
