import type { Logger } from 'pino';
import { isChannelError, type TelegramChannel } from '../channels';
import { isDomainError, messageOf } from '../shared/errors';
import { asInbound } from './channels';
import type { ChatbotDirectory, ChatbotInfo, InboundMessage } from './service';

type TelegramPollerPorts = {
  readonly bots: ChatbotDirectory;
  telegramOf(bot: ChatbotInfo): Promise<TelegramChannel | undefined>;
  /** Records a message once (its update id makes a repeat the same message). */
  receive(bot: ChatbotInfo, message: InboundMessage): Promise<unknown>;
  /** Records that polling fails (the error) or works again (null). */
  report(bot: ChatbotInfo, error: string | null): Promise<void>;
  readonly logger: Logger;
};

type TelegramPollerOptions = {
  /** How often the running Telegram chatbots are looked up (a started bot begins polling then). */
  readonly refreshMs: number;
  /** Telegram's long-poll time per getUpdates. */
  readonly pollSeconds: number;
  /** Wait before try n + 1 after a failed poll (ms). */
  readonly backoff: (attempt: number) => number;
};

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Telegram's way in: one getUpdates long poll per running Telegram chatbot, in every process that
 * answers chatbots. An update is confirmed to Telegram (the next poll's offset) only after its message
 * is recorded, so a process killed mid-poll loses nothing: the next poll (here or in another process)
 * gets it again, and recording it again is a no-op (the update id is the message's identity). Two
 * processes polling one bot make Telegram refuse one of them (409); it waits and tries again.
 */
export const telegramPollers = (ports: TelegramPollerPorts, options: TelegramPollerOptions) => {
  const stopped = new AbortController();
  const polling = new Map<bigint, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let refreshing = false;

  const stillRunning = async (id: bigint) => {
    const bot = await ports.bots.byId(id);
    return bot?.isRunning && bot.engine === 'telegram' ? bot : undefined;
  };

  const pollLoop = async (id: bigint) => {
    let offset: number | null = null;
    let failures = 0;
    // Unknown at the start: a failure recorded before (by this or another process) may be over.
    let reported = true;
    for (;;) {
      if (stopped.signal.aborted) return;
      const bot = await stillRunning(id);
      if (!bot) return;
      try {
        const telegram = await ports.telegramOf(bot);
        if (!telegram) return;
        const poll = await telegram.poll(offset, {
          timeoutSeconds: options.pollSeconds,
          signal: stopped.signal,
        });
        for (const message of poll.messages) {
          if (message.fromBot) continue;
          await ports.receive(bot, asInbound('telegram', message));
        }
        if (poll.nextOffset !== null) offset = poll.nextOffset;
        failures = 0;
        if (reported) {
          reported = false;
          await ports.report(bot, null);
        }
      } catch (error) {
        if (stopped.signal.aborted) return;
        // Stopped between the lookup and the recording: the update stays unconfirmed for its next start.
        if (isDomainError(error) && error.kind === 'Conflict') return;
        failures += 1;
        // Another process polling the same bot is expected (Telegram lets one through), not a failure.
        const expected = isChannelError(error) && (error.reason === 'conflict' || error.reason === 'aborted');
        if (!expected) {
          reported = true;
          await ports
            .report(bot, messageOf(error))
            .catch((e: unknown) => ports.logger.warn({ err: e }, 'Telegram failure not recorded'));
        }
        const wait =
          isChannelError(error) && error.retryAfterMs !== undefined
            ? error.retryAfterMs
            : options.backoff(failures);
        ports.logger.warn(
          { err: error, chatbot: bot.name, project: bot.project, retryInMs: Math.round(wait) },
          'Telegram poll failed',
        );
        await sleep(wait, stopped.signal);
      }
    }
  };

  const refresh = async () => {
    if (refreshing || stopped.signal.aborted) return;
    refreshing = true;
    try {
      for (const bot of await ports.bots.running()) {
        if (bot.engine !== 'telegram' || polling.has(bot.id)) continue;
        const loop = pollLoop(bot.id)
          .catch((error: unknown) => ports.logger.error({ err: error }, 'Telegram poller stopped'))
          .finally(() => polling.delete(bot.id));
        polling.set(bot.id, loop);
      }
    } catch (error) {
      if (!stopped.signal.aborted) ports.logger.warn({ err: error }, 'Telegram chatbots lookup failed');
    } finally {
      refreshing = false;
    }
  };

  return {
    start: () => {
      timer = setInterval(() => void refresh(), options.refreshMs);
      timer.unref();
      void refresh();
    },
    /** Looks for newly started Telegram chatbots now. */
    refresh,
    stop: async () => {
      stopped.abort();
      if (timer) clearInterval(timer);
      await Promise.allSettled([...polling.values()]);
    },
  };
};
