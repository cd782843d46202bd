import type { IncomingHttpHeaders } from 'node:http';
import type { Channel } from '../../events';
import { invalid } from '../shared/errors';
import type { Deliverer } from './processor';
import type { ChatbotInfo, InboundMessage } from './service';

export type ChannelConnection = { engine: string; parameters: Record<string, unknown> };

export type ChannelPortsOptions = {
  /** A chat database's engine and parameters (secrets included, from the log). */
  connection(databaseName: string): Promise<ChannelConnection | undefined>;
  slackApiBaseUrl: string;
  telegramApiBaseUrl: string;
  requestTimeoutMs: number;
};

/** TEMPORARY: the built-in channel only; the adapters land next. */
export const channelPorts = (_options: ChannelPortsOptions) => ({
  deliverer: async (_bot: ChatbotInfo, channel: Channel): Promise<Deliverer | null> => {
    if (channel === 'builtin') return null;
    throw invalid(`The ${channel} channel cannot deliver yet`);
  },
  inbound: async (
    _bot: ChatbotInfo,
    request: { headers: IncomingHttpHeaders; rawBody: Buffer; body: unknown },
  ): Promise<
    | { kind: 'challenge'; challenge: string }
    | { kind: 'message'; message: InboundMessage }
    | { kind: 'ignored'; reason: string }
  > => {
    const b = request.body as Record<string, unknown>;
    return {
      kind: 'message',
      message: {
        channel: 'webhook',
        chatId: String(b.chat_id ?? 'default'),
        user: String(b.user ?? 'user'),
        text: String(b.text ?? ''),
        externalId: typeof b.message_id === 'string' ? b.message_id : null,
        channelMessageId: null,
        threadId: null,
      },
    };
  },
});
