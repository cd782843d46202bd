import type {
  AgentUpdated,
  ChatbotCreated,
  ChatbotDeleted,
  ChatbotStoppedAgentDeleted,
  ChatbotUpdated,
  DatabaseDeleted,
} from '../events';
import type { Row, RowStore, TableProjection } from '../src/projection/types';
import { maskSecrets } from '../src/shared/secrets';

const agentName = async (agentId: number | null, agents: RowStore) =>
  agentId === null ? null : (((await agents.get(BigInt(agentId)))?.NAME as string | undefined) ?? null);

/** `chatbots`: one row per live chatbot (MindsDB's information_schema.CHATBOTS columns first). */
export const chatbotsProjection: TableProjection = {
  table: 'chatbots',
  key: 'ID',
  columns: [
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'PROJECT', type: 'VARCHAR' },
    { name: 'DATABASE', type: 'VARCHAR' },
    { name: 'AGENT', type: 'VARCHAR' },
    { name: 'MODEL_NAME', type: 'VARCHAR' },
    { name: 'PARAMS', type: 'JSON' },
    { name: 'IS_RUNNING', type: 'BOOLEAN' },
    { name: 'LAST_ERROR', type: 'VARCHAR' },
    { name: 'WEBHOOK_TOKEN', type: 'VARCHAR' },
    { name: 'ID', type: 'BIGINT' },
    { name: 'PROJECT_ID', type: 'BIGINT' },
    { name: 'AGENT_ID', type: 'BIGINT' },
    { name: 'DATABASE_ID', type: 'BIGINT' },
    { name: 'CREATED_AT', type: 'TIMESTAMP' },
    { name: 'UPDATED_AT', type: 'TIMESTAMP' },
    { name: 'VERSION', type: 'BIGINT' },
  ],
  handles: [
    'ChatbotCreated',
    'ChatbotUpdated',
    'ChatbotDeleted',
    'ChatbotStoppedAgentDeleted',
    'AgentUpdated',
    'DatabaseDeleted',
  ],
  apply: async (event, rows, lookup) => {
    switch (event.type) {
      case 'ChatbotCreated':
      case 'ChatbotUpdated': {
        const d = (event as unknown as ChatbotCreated | ChatbotUpdated).data;
        const id = 'chatbotId' in d ? BigInt(d.chatbotId) : event.meta.position;
        const current = 'chatbotId' in d ? await rows.get(id) : undefined;
        if ('chatbotId' in d && !current) return;
        const restarted = d.isRunning && current && !current.IS_RUNNING;
        rows.put({
          ID: id,
          NAME: d.name,
          PROJECT: d.project,
          PROJECT_ID: d.projectId,
          DATABASE: d.databaseName,
          DATABASE_ID: d.databaseId,
          AGENT: await agentName(d.agentId, lookup('agents')),
          AGENT_ID: d.agentId,
          MODEL_NAME: d.modelName,
          PARAMS: maskSecrets(d.params),
          IS_RUNNING: d.isRunning,
          LAST_ERROR: restarted ? null : ((current?.LAST_ERROR as string | null | undefined) ?? null),
          WEBHOOK_TOKEN: d.webhookToken,
          CREATED_AT: current?.CREATED_AT ?? ('createdAt' in d ? d.createdAt : null),
          UPDATED_AT: 'updatedAt' in d ? d.updatedAt : d.createdAt,
          VERSION: event.meta.position,
        });
        return;
      }
      case 'ChatbotStoppedAgentDeleted': {
        const d = (event as unknown as ChatbotStoppedAgentDeleted).data;
        const row = await rows.get(BigInt(d.chatbotId));
        if (!row) return;
        rows.put({
          ...row,
          AGENT: null,
          AGENT_ID: null,
          IS_RUNNING: false,
          LAST_ERROR: d.lastError,
          UPDATED_AT: d.stoppedAt,
          VERSION: event.meta.position,
        });
        return;
      }
      case 'AgentUpdated': {
        // A renamed agent is renamed in every chatbot that uses it.
        const d = (event as unknown as AgentUpdated).data;
        const users = await rows.scan((r: Row) => r.AGENT_ID === BigInt(d.agentId));
        for (const row of users) rows.put({ ...row, AGENT: d.name });
        return;
      }
      case 'DatabaseDeleted': {
        // The chat database is gone: the bot keeps its settings and shows no database (MindsDB: "?").
        const d = (event as unknown as DatabaseDeleted).data;
        const users = await rows.scan((r: Row) => r.DATABASE_ID === BigInt(d.databaseId));
        for (const row of users) rows.put({ ...row, DATABASE: null, DATABASE_ID: null });
        return;
      }
      case 'ChatbotDeleted':
        rows.delete(BigInt((event as unknown as ChatbotDeleted).data.chatbotId));
        return;
    }
  },
};
