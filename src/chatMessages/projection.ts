import type { ChatAnswerFailed, ChatDeliveryFailed } from '../../events';
import { allHandled, selectRow, selectRows, tableProjection, type RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import { timestampText } from '../shared/time';

/** A failed try gives up its claim and says why, and when the next one is due (none: given up). */
const failedCells = (d: ChatAnswerFailed['data'] | ChatDeliveryFailed['data']) => ({
  CLAIMED_BY: null,
  LEASE_UNTIL: null,
  RETRY_AT: d.retryAt,
  LAST_ERROR: d.error,
});

/**
 * `chat_messages`: every inbound message of every chatbot, with where it is (received, claimed,
 * failed, answered, delivered, given up), its answer and the run that made it
 * (information_schema.CHAT_MESSAGES). The processor finds its work here; conversations are read here.
 */
export const chatMessagesTable = tableProjection({
  table: 'chat_messages',
  // Changes with every call, run or batch: other answers are kept through it (readVersions.ts).
  activity: true,
  key: 'MESSAGE_ID',
  columns: columns(
    `MESSAGE_ID VARCHAR, CHATBOT_ID BIGINT, PROJECT VARCHAR, CHATBOT VARCHAR, CHANNEL VARCHAR,
    CHAT_ID VARCHAR, USER VARCHAR, TEXT VARCHAR, EXTERNAL_ID VARCHAR NULL,
    CHANNEL_MESSAGE_ID VARCHAR NULL, THREAD_ID VARCHAR NULL, STATUS VARCHAR, ATTEMPTS INTEGER,
    DELIVERIES INTEGER, CLAIMED_BY VARCHAR NULL, LEASE_UNTIL TIMESTAMP NULL, RETRY_AT TIMESTAMP NULL,
    LAST_ERROR VARCHAR NULL, ANSWER_ID VARCHAR NULL, ANSWER VARCHAR NULL, TRACE_ID VARCHAR NULL,
    RECEIVED_AT TIMESTAMP, ANSWERED_AT TIMESTAMP NULL, DELIVERED_AT TIMESTAMP NULL`,
    /** Global positions: the message's, and its answer's (a conversation is read in this order). */
    'POSITION BIGINT, ANSWER_POSITION BIGINT NULL',
    'STREAM VARCHAR',
  ),
  handles: [
    'ChatMessageReceived',
    'ChatAnswerClaimed',
    'ChatAnswered',
    'ChatAnswerFailed',
    'ChatAnswerDelivered',
    'ChatDeliveryFailed',
  ],
  apply: async (event, rows) => {
    if (event.type === 'ChatMessageReceived') {
      const d = event.data;
      rows.put({
        MESSAGE_ID: d.messageId,
        CHATBOT_ID: d.chatbotId,
        PROJECT: d.project,
        CHATBOT: d.chatbot,
        CHANNEL: d.channel,
        CHAT_ID: d.chatId,
        USER: d.user,
        TEXT: d.text,
        EXTERNAL_ID: d.externalId,
        CHANNEL_MESSAGE_ID: d.channelMessageId,
        THREAD_ID: d.threadId,
        STATUS: 'received',
        ATTEMPTS: 0,
        DELIVERIES: 0,
        CLAIMED_BY: null,
        LEASE_UNTIL: null,
        RETRY_AT: null,
        LAST_ERROR: null,
        ANSWER_ID: null,
        ANSWER: null,
        TRACE_ID: null,
        RECEIVED_AT: d.receivedAt,
        ANSWERED_AT: null,
        DELIVERED_AT: null,
        POSITION: event.meta.position,
        ANSWER_POSITION: null,
        STREAM: event.meta.stream,
      });
      return;
    }
    if (
      event.type !== 'ChatAnswerClaimed' &&
      event.type !== 'ChatAnswered' &&
      event.type !== 'ChatAnswerFailed' &&
      event.type !== 'ChatAnswerDelivered' &&
      event.type !== 'ChatDeliveryFailed'
    )
      return;
    const row = await rows.get(event.data.messageId);
    if (!row) return;
    switch (event.type) {
      case 'ChatAnswerClaimed': {
        const d = event.data;
        rows.put({
          ...row,
          STATUS: 'claimed',
          CLAIMED_BY: d.node,
          LEASE_UNTIL: d.leaseUntil,
          ...(d.purpose === 'answer' ? { ATTEMPTS: d.attempt } : { DELIVERIES: d.attempt }),
        });
        return;
      }
      case 'ChatAnswered': {
        const d = event.data;
        rows.put({
          ...row,
          STATUS: 'answered',
          ANSWER_ID: d.answerId,
          ANSWER: d.text,
          TRACE_ID: d.traceId,
          ANSWERED_AT: d.answeredAt,
          ANSWER_POSITION: event.meta.position,
          RETRY_AT: null,
          LAST_ERROR: null,
        });
        return;
      }
      case 'ChatAnswerFailed': {
        const d = event.data;
        rows.put({ ...row, STATUS: d.retryAt === null ? 'given_up' : 'failed', ...failedCells(d) });
        return;
      }
      case 'ChatAnswerDelivered':
        rows.put({
          ...row,
          STATUS: 'delivered',
          CLAIMED_BY: null,
          LEASE_UNTIL: null,
          RETRY_AT: null,
          LAST_ERROR: null,
          DELIVERED_AT: event.data.deliveredAt,
        });
        return;
      case 'ChatDeliveryFailed': {
        const d = event.data;
        rows.put({
          ...row,
          STATUS: d.retryAt === null ? 'given_up' : 'answered',
          DELIVERIES: Math.max(Number(row.DELIVERIES ?? 0), d.attempt),
          ...failedCells(d),
        });
        return;
      }
      default:
        return allHandled(event);
    }
  },
});

export type ChatMessageRow = RowOf<typeof chatMessagesTable.columns>;

/**
 * Messages that may need work now, for running chatbots: in each chat, the oldest message not yet
 * answered (a chat is answered in order), and answers not yet delivered. Claims decide who works
 * on them; this only finds them.
 */
export const pendingMessages = async (
  reader: TableReader,
  chatbotIds: readonly bigint[],
  now: Date,
  limit: number,
) => {
  if (chatbotIds.length === 0) return [];
  const ids = chatbotIds.map((id) => `${BigInt(id)}`).join(', ');
  return selectRows(
    chatMessagesTable,
    reader,
    `WITH open AS (
       SELECT *, row_number() OVER (PARTITION BY CHATBOT_ID, CHAT_ID ORDER BY POSITION) AS turn
       FROM chat_messages WHERE CHATBOT_ID IN (${ids}) AND STATUS IN ('received', 'claimed', 'failed')
         AND ANSWER_ID IS NULL)
     SELECT * EXCLUDE (turn) FROM open
       WHERE turn = 1 AND (STATUS <> 'claimed' OR LEASE_UNTIL <= $now::TIMESTAMP)
         AND (RETRY_AT IS NULL OR RETRY_AT <= $now::TIMESTAMP)
     UNION ALL
     SELECT * FROM chat_messages WHERE CHATBOT_ID IN (${ids}) AND STATUS = 'answered'
       AND (RETRY_AT IS NULL OR RETRY_AT <= $now::TIMESTAMP) AND (LEASE_UNTIL IS NULL OR LEASE_UNTIL <= $now::TIMESTAMP)
     UNION ALL
     SELECT * FROM chat_messages WHERE CHATBOT_ID IN (${ids}) AND STATUS = 'claimed' AND ANSWER_ID IS NOT NULL
       AND LEASE_UNTIL <= $now::TIMESTAMP
     ORDER BY POSITION LIMIT ${Math.max(1, Math.floor(limit))}`,
    { now: timestampText(now) },
  );
};

/** The conversation before a message, oldest first: the last `limit` messages of its chat, with their answers. */
export const conversationBefore = async (
  reader: TableReader,
  chatbotId: bigint,
  chatId: string,
  position: bigint,
  limit: number,
) =>
  selectRows(
    chatMessagesTable,
    reader,
    `SELECT * FROM (SELECT * FROM chat_messages WHERE CHATBOT_ID = ? AND CHAT_ID = ? AND POSITION < ?
         ORDER BY POSITION DESC LIMIT ${Math.max(0, Math.floor(limit))}) ORDER BY POSITION`,
    [chatbotId, chatId, position],
  );

/** A chat's messages and answers after a position, for `GET …/messages` and its live stream. */
export const conversationAfter = async (
  reader: TableReader,
  chatbotId: bigint,
  chatId: string | null,
  after: bigint,
  limit: number,
) =>
  selectRows(
    chatMessagesTable,
    reader,
    `SELECT * FROM chat_messages WHERE CHATBOT_ID = ? ${chatId === null ? '' : 'AND CHAT_ID = ?'}
       AND (POSITION > ? OR ANSWER_POSITION > ?) ORDER BY POSITION LIMIT ${Math.max(1, Math.floor(limit))}`,
    chatId === null ? [chatbotId, after, after] : [chatbotId, chatId, after, after],
  );

export const messageRow = async (reader: TableReader, messageId: string) =>
  selectRow(chatMessagesTable, reader, 'SELECT * FROM chat_messages WHERE MESSAGE_ID = ?', [messageId]);
