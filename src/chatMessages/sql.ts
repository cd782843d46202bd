import { ownProject, type SqlCatalog } from '../sql/handlers';

/** information_schema.CHAT_MESSAGES: every inbound chat message's life. */
export const chatMessageCatalog = {
  informationSchema: {
    CHAT_MESSAGES: `SELECT MESSAGE_ID, PROJECT, CHATBOT, CHANNEL, CHAT_ID, USER, TEXT, STATUS, ATTEMPTS, DELIVERIES,
      CLAIMED_BY, LEASE_UNTIL, RETRY_AT, LAST_ERROR, ANSWER_ID, ANSWER, TRACE_ID, RECEIVED_AT, ANSWERED_AT,
      DELIVERED_AT, EXTERNAL_ID FROM main.chat_messages ORDER BY POSITION`,
  },
  scopedRows: { chat_messages: ownProject },
} satisfies SqlCatalog;
