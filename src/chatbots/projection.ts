import type { ChatbotCreated, ChatbotUpdated } from '../../events';
import type { RowStore, TableReader } from '../projection/types';
import {
  patchRow,
  projectResourceReads,
  updatedRow,
  projectResourceTable,
} from '../projection/resourceTable';
import { NAME_AND_PROJECT, RESOURCE_IDS, RESOURCE_STAMPS } from '../projection/resourceColumns';
import { allHandled, selectRow, selectRows, type RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

const agentName = async (agentId: number | null, agents: RowStore) =>
  agentId === null ? null : (((await agents.get(BigInt(agentId)))?.NAME as string | undefined) ?? null);

/** The columns a chatbot's created or updated state sets. */
const stateColumns = async (d: ChatbotCreated['data'] | ChatbotUpdated['data'], agents: RowStore) => ({
  NAME: d.name,
  PROJECT: d.project,
  PROJECT_ID: d.projectId,
  DATABASE: d.databaseName,
  DATABASE_ID: d.databaseId,
  AGENT: await agentName(d.agentId, agents),
  AGENT_ID: d.agentId,
  MODEL_NAME: d.modelName,
  PARAMS: maskSecrets(d.params),
  IS_RUNNING: d.isRunning,
  WEBHOOK_TOKEN: d.webhookToken,
});

const channelFailurePrefix = (channel: string) => `The ${channel} channel is failing: `;
const isChannelFailure = (lastError: unknown) =>
  typeof lastError === 'string' && /^The \w+ channel is failing: /.test(lastError);

/** `chatbots`: one row per live chatbot (MindsDB's information_schema.CHATBOTS columns first). */
export const chatbotsTable = projectResourceTable({
  table: 'chatbots',
  key: 'ID',
  history: true,
  columns: columns(
    NAME_AND_PROJECT,
    `DATABASE VARCHAR NULL, AGENT VARCHAR NULL, MODEL_NAME VARCHAR NULL, PARAMS JSON, IS_RUNNING BOOLEAN,
    LAST_ERROR VARCHAR NULL, WEBHOOK_TOKEN VARCHAR NULL`,
    RESOURCE_IDS,
    'AGENT_ID BIGINT NULL, DATABASE_ID BIGINT NULL',
    RESOURCE_STAMPS,
  ),
  handles: [
    'ChatbotCreated',
    'ChatbotUpdated',
    'ChatbotDeleted',
    'ChatbotStoppedAgentDeleted',
    'AgentUpdated',
    'DatabaseDeleted',
    'ChatAnswerFailed',
    'ChatDeliveryFailed',
    'ChatAnswered',
    'ChatAnswerDelivered',
    'ChatChannelFailed',
    'ChatChannelRecovered',
  ],
  createdBy: {
    type: 'ChatbotCreated',
    cells: async ({ data: d }, lookup) => ({
      ...(await stateColumns(d, lookup('agents'))),
      LAST_ERROR: null,
    }),
  },
  deletedBy: { type: 'ChatbotDeleted', key: (e) => BigInt(e.data.chatbotId) },
  apply: async (event, rows, lookup) => {
    switch (event.type) {
      case 'ChatbotUpdated': {
        const d = event.data;
        const cells = await stateColumns(d, lookup('agents'));
        return updatedRow(rows, d.chatbotId, event.meta.position, d.updatedAt, (current) => ({
          ...cells,
          // Starting a bot again clears why it stopped, not a channel still failing (cleared when it recovers).
          LAST_ERROR:
            d.isRunning && !current.IS_RUNNING && !isChannelFailure(current.LAST_ERROR)
              ? null
              : current.LAST_ERROR,
        }));
      }
      case 'ChatbotStoppedAgentDeleted': {
        const d = event.data;
        const cells = { AGENT: null, AGENT_ID: null, IS_RUNNING: false, LAST_ERROR: d.lastError };
        return updatedRow(rows, d.chatbotId, event.meta.position, d.stoppedAt, cells);
      }
      case 'AgentUpdated': {
        // A renamed agent is renamed in every chatbot that uses it.
        const d = event.data;
        const users = await rows.scan({ AGENT_ID: BigInt(d.agentId) });
        for (const row of users) rows.put({ ...row, AGENT: d.name });
        return;
      }
      case 'DatabaseDeleted': {
        // The chat database is gone: the bot keeps its settings and shows no database (MindsDB: "?").
        const d = event.data;
        const users = await rows.scan({ DATABASE_ID: BigInt(d.databaseId) });
        for (const row of users) rows.put({ ...row, DATABASE: null, DATABASE_ID: null });
        return;
      }
      // A message it could not answer or deliver says why (`last_error`); the next success clears it.
      case 'ChatAnswerFailed':
      case 'ChatDeliveryFailed': {
        const d = event.data;
        const what = event.type === 'ChatAnswerFailed' ? 'answer' : 'deliver the answer to';
        const next = d.retryAt === null ? 'gave up' : `retrying at ${d.retryAt}`;
        const error = `Could not ${what} message ${d.messageId} (attempt ${d.attempt}, ${next}): ${d.error}`;
        return patchRow(rows, BigInt(d.chatbotId), { LAST_ERROR: error });
      }
      // Its way in failing (a revoked token) says so too, until the channel works again.
      case 'ChatChannelFailed': {
        const d = event.data;
        return patchRow(rows, BigInt(d.chatbotId), {
          LAST_ERROR: `${channelFailurePrefix(d.channel)}${d.error}`,
        });
      }
      case 'ChatChannelRecovered': {
        const d = event.data;
        const row = await rows.get(BigInt(d.chatbotId));
        if (row && String(row.LAST_ERROR ?? '').startsWith(channelFailurePrefix(d.channel)))
          rows.put({ ...row, LAST_ERROR: null });
        return;
      }
      case 'ChatAnswered':
      case 'ChatAnswerDelivered': {
        const row = await rows.get(BigInt(event.data.chatbotId));
        if (!row || row.LAST_ERROR === null || !String(row.LAST_ERROR).startsWith('Could not ')) return;
        rows.put({ ...row, LAST_ERROR: null });
        return;
      }
      default:
        return allHandled(event);
    }
  },
});

export type ChatbotRow = RowOf<typeof chatbotsTable.columns>;

export const chatbotRowsOfProject = projectResourceReads(chatbotsTable).ofProject;

/** One chatbot of a project, by its exact name or its id (as `isChatbotRef` matches); the lowest id when both match. */
export const chatbotRowByRef = async (reader: TableReader, projectId: number, ref: string) =>
  selectRow(
    chatbotsTable,
    reader,
    'SELECT * FROM chatbots WHERE PROJECT_ID = ? AND (NAME = ? OR ID = ?) ORDER BY ID LIMIT 1',
    [BigInt(projectId), ref, /^\d+$/.test(ref) ? BigInt(ref) : -1n],
  );

export const chatbotRowById = async (reader: TableReader, id: bigint) =>
  selectRow(chatbotsTable, reader, 'SELECT * FROM chatbots WHERE ID = ?', [id]);

export const chatbotRowByWebhookToken = async (reader: TableReader, token: string) =>
  selectRow(chatbotsTable, reader, 'SELECT * FROM chatbots WHERE WEBHOOK_TOKEN = ?', [token]);

export const runningChatbotRows = async (reader: TableReader) =>
  selectRows(chatbotsTable, reader, 'SELECT * FROM chatbots WHERE IS_RUNNING ORDER BY ID');
