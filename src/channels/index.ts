/**
 * The channel engine: adapters that speak Slack's, Telegram's and a generic webhook's HTTP protocols.
 * It knows no capability (it imports only src/shared); the chatbot worker drives it.
 */
export * from './types';
export { backoff, retryDelay, type BackoffOptions } from './backoff';
export { splitText } from './text';
export { slackChannel, type SlackChannel, type SlackConnection, type SlackInbound } from './slack';
export {
  parseTelegramUpdate,
  telegramChannel,
  TELEGRAM_MAX_TEXT,
  type TelegramBot,
  type TelegramChannel,
  type TelegramConnection,
  type TelegramPoll,
  type TelegramPollOptions,
  type TelegramUpdate,
} from './telegram';
export {
  verifyWebhookSignature,
  webhookChannel,
  webhookInbound,
  webhookInboundBody,
  webhookSignature,
  type WebhookChannel,
  type WebhookConnection,
  type WebhookDelivery,
  type WebhookInboundBody,
  type WebhookOptions,
} from './webhook';
