import crypto from 'node:crypto';
import os from 'node:os';
import type { Channel } from '../../events';
import { settled, type AppContext } from '../context';
import { isDomainError, messageOf, unlessClaimLost } from '../shared/errors';
import { retryDelay } from '../channels';
import { conversationBefore, pendingMessages, type ChatMessageRow } from './projection';
import { runOnMessage, type ChatbotDirectory, type ChatbotInfo } from './service';

/** An answer on its way out: the answer's id travels with it, so a receiver can drop a repeat. */
type OutboundAnswer = {
  readonly chatId: string;
  readonly text: string;
  readonly answerId: string;
  /** The channel's id of the message answered (a Telegram message id to reply to). */
  readonly inReplyTo: string | null;
  readonly threadId: string | null;
};

/** A channel's way out. A failure may say whether trying again could help, and when. */
export type Deliverer = {
  deliver(answer: OutboundAnswer, signal?: AbortSignal): Promise<{ externalId: string | null }>;
};

type ChatProcessorPorts = {
  readonly bots: ChatbotDirectory;
  /** The bot's answer to `question`, with the conversation so far as memory. */
  answer(
    bot: ChatbotInfo,
    history: readonly { question: string; answer: string }[],
    question: string,
    signal: AbortSignal,
  ): Promise<{ text: string; traceId: string | null }>;
  /** How answers reach `channel` for this bot (null: nothing to deliver, the built-in channel). */
  deliverer(bot: ChatbotInfo, channel: Channel): Promise<Deliverer | null>;
};

type ChatProcessorOptions = {
  /** How long a claim holds before another process may take the message over. */
  readonly leaseMs: number;
  /** How often pending work is looked for (besides being woken by a new message). */
  readonly pollMs: number;
  /** Messages answered at once by this process. */
  readonly concurrency: number;
  /** Answer attempts before a message is given up (its error stays). */
  readonly maxAttempts: number;
  /** Delivery attempts before an answer is given up. */
  readonly maxDeliveries: number;
  /** Earlier messages (and their answers) given to the agent as memory (MindsDB: 100). */
  readonly memoryMessages: number;
  /** Wait before attempt n + 1 (ms). */
  readonly backoff: (attempt: number) => number;
};

/** This process, as claims name it. */
const processNode = () => `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;

/** A failure the next attempt cannot fix: the request itself is wrong (a 4xx of ours). */
const isPermanent = (error: unknown) =>
  (isDomainError(error) && ['Invalid', 'NotFound', 'Forbidden', 'Unauthorized'].includes(error.kind)) ||
  (typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === false);

/** What one message's work needs of its processor. */
type MessageWork = {
  readonly ctx: AppContext;
  readonly ports: ChatProcessorPorts;
  readonly options: ChatProcessorOptions;
  readonly node: string;
  /** Aborted when the processor stops: a call in flight is abandoned, nothing more recorded. */
  readonly stopped: AbortSignal;
};

const claimMessage = async ({ ctx, node, options }: MessageWork, row: ChatMessageRow) => {
  const claimId = crypto.randomUUID();
  const outcome = await runOnMessage(ctx, row.STREAM, {
    type: 'Claim',
    data: { claimId, node, leaseMs: options.leaseMs },
  });
  const claimed = outcome.events[0];
  if (claimed?.type !== 'ChatAnswerClaimed') return null;
  await settled(ctx, outcome.lastPosition);
  return { claimId, purpose: claimed.data.purpose, attempt: claimed.data.attempt };
};

/** A step recorded under the claim; false when the claim was lost (another process has the message). */
const recordStep = async (
  { ctx }: MessageWork,
  row: ChatMessageRow,
  command: Parameters<typeof runOnMessage>[2],
) => {
  const outcome = await unlessClaimLost(runOnMessage(ctx, row.STREAM, command));
  if (outcome === null) return false;
  await settled(ctx, outcome.lastPosition);
  return true;
};

const retryAt = ({ ctx, options }: MessageWork, attempt: number, max: number, error: unknown) => {
  if (isPermanent(error) || attempt >= max) return null;
  return new Date(ctx.clock().getTime() + retryDelay(error, attempt, options.backoff));
};

/** The claim's share of the processor's time: a call past the lease is abandoned. */
const leaseSignal = (w: MessageWork) => AbortSignal.any([w.stopped, AbortSignal.timeout(w.options.leaseMs)]);

const deliverAnswer = async (
  w: MessageWork,
  row: ChatMessageRow,
  bot: ChatbotInfo,
  claim: { claimId: string; attempt: number },
  answer: { answerId: string; text: string },
) => {
  const { claimId, attempt } = claim;
  try {
    const deliverer = await w.ports.deliverer(bot, row.CHANNEL as Channel);
    const sent = deliverer
      ? await deliverer.deliver(
          {
            chatId: row.CHAT_ID,
            text: answer.text,
            answerId: answer.answerId,
            inReplyTo: row.CHANNEL_MESSAGE_ID,
            threadId: row.THREAD_ID,
          },
          leaseSignal(w),
        )
      : { externalId: null };
    await recordStep(w, row, { type: 'Deliver', data: { claimId, externalId: sent.externalId } });
  } catch (error) {
    if (w.stopped.aborted) return;
    await recordStep(w, row, {
      type: 'FailDelivery',
      data: {
        claimId,
        error: messageOf(error),
        retryAt: retryAt(w, attempt, w.options.maxDeliveries, error),
      },
    });
  }
};

/** The agent's answer, with the chat so far as its memory. */
const askAgent = async (w: MessageWork, row: ChatMessageRow, bot: ChatbotInfo) => {
  const earlier = await conversationBefore(
    w.ctx.duck,
    row.CHATBOT_ID,
    row.CHAT_ID,
    row.POSITION,
    w.options.memoryMessages,
  );
  const history = earlier
    .filter((m) => m.ANSWER !== null)
    .map((m) => ({ question: m.TEXT, answer: m.ANSWER! }));
  return w.ports.answer(bot, history, row.TEXT, leaseSignal(w));
};

/** One message: claimed, answered (or its answer delivered again), each step recorded under the claim. */
const workOn = async (w: MessageWork, row: ChatMessageRow) => {
  const bot = await w.ports.bots.byId(row.CHATBOT_ID);
  if (!bot || !bot.isRunning) return;
  const claimed = await claimMessage(w, row);
  if (!claimed) return;
  if (claimed.purpose === 'deliver') {
    if (row.ANSWER_ID === null || row.ANSWER === null) return;
    await deliverAnswer(w, row, bot, claimed, { answerId: row.ANSWER_ID, text: row.ANSWER });
    return;
  }
  let answer: { text: string; traceId: string | null };
  try {
    answer = await askAgent(w, row, bot);
  } catch (error) {
    if (w.stopped.aborted) return;
    await recordStep(w, row, {
      type: 'FailAnswer',
      data: {
        claimId: claimed.claimId,
        error: messageOf(error),
        retryAt: retryAt(w, claimed.attempt, w.options.maxAttempts, error),
      },
    });
    return;
  }
  const answerId = crypto.randomUUID();
  const kept = await recordStep(w, row, {
    type: 'Answer',
    data: { claimId: claimed.claimId, answerId, text: answer.text, traceId: answer.traceId },
  });
  if (!kept) return;
  await deliverAnswer(w, row, bot, { claimId: claimed.claimId, attempt: 1 }, { answerId, text: answer.text });
};

/**
 * Answers chatbots' messages. Every process runs one; they share the work through claims on each
 * message's stream (decider.ts): a process claims a message (a lease), asks the agent, records the
 * answer only while its claim holds, then delivers it and records that. A process killed mid-answer
 * leaves a claim that expires; another process (or this one, restarted) takes the message over. A
 * chat is answered in order: only its oldest unanswered message is taken.
 */
export const chatProcessor = (
  ctx: AppContext,
  ports: ChatProcessorPorts,
  options: ChatProcessorOptions,
  node = processNode(),
) => {
  const working = new Set<string>();
  const tasks = new Set<Promise<void>>();
  const stopped = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let scanning: Promise<void> | null = null;
  let again = false;

  const messageWork: MessageWork = { ctx, ports, options, node, stopped: stopped.signal };

  const scan = async () => {
    const bots = await ports.bots.running();
    const free = options.concurrency - working.size;
    if (free <= 0 || bots.length === 0) return;
    const rows = await pendingMessages(
      ctx.duck,
      bots.map((b) => b.id),
      ctx.clock(),
      free + working.size,
    );
    for (const row of rows) {
      if (working.size >= options.concurrency || stopped.signal.aborted) break;
      // One message per chat at a time in this process (chats are answered in order).
      const chat = `${row.CHATBOT_ID}:${row.CHAT_ID}`;
      if (working.has(row.MESSAGE_ID) || working.has(chat)) continue;
      working.add(row.MESSAGE_ID);
      working.add(chat);
      const task = workOn(messageWork, row)
        .catch((error: unknown) =>
          ctx.logger.error({ err: error, message: row.MESSAGE_ID }, 'chat message work failed'),
        )
        .finally(() => {
          working.delete(row.MESSAGE_ID);
          working.delete(chat);
          tasks.delete(task);
          wake();
        });
      tasks.add(task);
    }
  };

  /** Looks for work now (a new message arrived, or a task finished). */
  const wake = () => {
    if (stopped.signal.aborted) return;
    if (scanning) {
      again = true;
      return;
    }
    scanning = (async () => {
      do {
        again = false;
        await scan().catch((error: unknown) => {
          if (!stopped.signal.aborted) ctx.logger.warn({ err: error }, 'chat processor scan failed');
        });
      } while (again && !stopped.signal.aborted);
    })().finally(() => {
      scanning = null;
    });
  };

  return {
    node,
    start: () => {
      timer = setInterval(wake, options.pollMs);
      timer.unref();
      wake();
    },
    wake,
    /** Stops taking work and abandons what runs (its claims expire; nothing half-recorded). */
    stop: async () => {
      stopped.abort();
      if (timer) clearInterval(timer);
      await Promise.allSettled([...tasks, scanning]);
    },
  };
};

export type ChatProcessor = ReturnType<typeof chatProcessor>;
