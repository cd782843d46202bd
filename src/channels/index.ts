/**
 * The channel engine: adapters that speak Slack's, Telegram's and a generic webhook's HTTP protocols.
 * It knows no capability (it imports only src/shared); the chatbot worker drives it.
 */
export * from './types';
export { backoff, retryDelay } from './backoff';
export { splitText } from './text';
export { slackChannel, type SlackChannel } from './slack';
export { parseTelegramUpdate, telegramChannel, type TelegramChannel } from './telegram';
export {
  verifyWebhookSignature,
  webhookChannel,
  webhookInbound,
  webhookInboundBody,
  webhookSignature,
  type WebhookChannel,
} from './webhook';
