import { toMindsDbTimestamp } from '../shared/time';
import type { ChatMessageRow } from './projection';

/** One line of a conversation: a user's message (with where it is) or the bot's answer. */
export type ConversationItem =
  | {
      seq: string;
      message_id: string;
      chat_id: string;
      role: 'user';
      user: string;
      text: string;
      channel: string;
      status: string;
      error: string | null;
      sent_at: string;
    }
  | {
      seq: string;
      message_id: string;
      chat_id: string;
      role: 'assistant';
      text: string;
      answer_id: string;
      trace_id: string | null;
      delivered: boolean;
      sent_at: string;
    };

/**
 * Messages and their answers, in the order the log recorded them (`seq`, a log position: the
 * cursor `after` takes). A message answered later appears twice in a feed: once when it arrives,
 * once when its answer does.
 */
export const presentConversation = (rows: readonly ChatMessageRow[], after: bigint): ConversationItem[] => {
  const items: (ConversationItem & { order: bigint })[] = [];
  for (const r of rows) {
    if (r.POSITION > after)
      items.push({
        order: r.POSITION,
        seq: String(r.POSITION),
        message_id: r.MESSAGE_ID,
        chat_id: r.CHAT_ID,
        role: 'user',
        user: r.USER,
        text: r.TEXT,
        channel: r.CHANNEL,
        status: r.STATUS,
        error: r.LAST_ERROR,
        sent_at: toMindsDbTimestamp(r.RECEIVED_AT),
      });
    if (r.ANSWER_POSITION !== null && r.ANSWER_POSITION > after && r.ANSWER !== null && r.ANSWER_ID !== null)
      items.push({
        order: r.ANSWER_POSITION,
        seq: String(r.ANSWER_POSITION),
        message_id: r.MESSAGE_ID,
        chat_id: r.CHAT_ID,
        role: 'assistant',
        text: r.ANSWER,
        answer_id: r.ANSWER_ID,
        trace_id: r.TRACE_ID,
        delivered: r.STATUS === 'delivered' || r.CHANNEL === 'builtin',
        sent_at: toMindsDbTimestamp(r.ANSWERED_AT ?? r.RECEIVED_AT),
      });
  }
  return items
    .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0))
    .map(({ order: _o, ...item }) => item);
};
