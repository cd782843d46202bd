import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { EventType } from '../events';
import type { Config } from '../src/config';
import { commandRunner } from '../src/eventlog/commands';
import type { EventLog, NewEvent } from '../src/eventlog/types';
import { systemClock } from '../src/shared/time';
import { openStores } from '../src/stores';
import { ProjectLife, type LifeLog } from './projectLife';
import { fmt } from './support';

/** Project lives run at once: their appends, on distinct streams, are grouped by the log into few statements. */
const LIVES_IN_FLIGHT = 64;

/** The mix's generator seed: the same seed and size, the same commands. */
const MIX_SEED = 62;

/** What the mix's events are about, as the seeder prints their shares. */
const CATEGORIES: Partial<Record<EventType, string>> = {
  ChatMessageReceived: 'chat messages',
  ChatAnswerClaimed: 'chat messages',
  ChatAnswered: 'chat messages',
  ChatAnswerDelivered: 'chat messages',
  ModelVersionDefined: 'models',
  ModelTrainingStarted: 'models',
  ModelTrainingProgressed: 'models',
  ModelTrained: 'models',
  ModelVersionActivated: 'models',
  KnowledgeBaseDocumentsInserted: 'KB documents',
  KnowledgeBaseDocumentsDeleted: 'KB documents',
  SkillCreated: 'skills',
  AgentCreated: 'agents',
  KnowledgeBaseCreated: 'knowledge bases',
  ChatbotCreated: 'chatbots',
  ProjectCreated: 'projects',
  SkillUpdated: 'updates',
  AgentUpdated: 'updates',
  ModelOptionsUpdated: 'updates',
  SkillDeleted: 'deletes',
  SkillDetachedFromAgent: 'deletes',
  AgentDeleted: 'deletes',
  ChatbotStoppedAgentDeleted: 'deletes',
  ChatbotDeleted: 'deletes',
  ModelDeleted: 'deletes',
  KnowledgeBaseDeleted: 'deletes',
  ProjectDeleted: 'deletes',
};

/** Thrown by an append that would take the log past its size: nothing is appended, and the life ends there. */
class LogFull extends Error {}

/** What the log may still take: exactly `total` events, counted by category as they are appended. */
class EventBudget {
  private remaining: number;
  private readonly counts = new Map<string, number>();

  constructor(readonly total: number) {
    this.remaining = total;
  }

  get spent() {
    return this.remaining === 0;
  }

  take(events: readonly NewEvent[]) {
    if (events.length > this.remaining) throw new LogFull();
    this.remaining -= events.length;
  }

  /** Events taken whose append failed. */
  giveBack(events: readonly NewEvent[]) {
    this.remaining += events.length;
  }

  count(events: readonly NewEvent[]) {
    for (const e of events) {
      const category = CATEGORIES[e.type] ?? 'other';
      this.counts.set(category, (this.counts.get(category) ?? 0) + 1);
    }
  }

  /** The categories' shares, largest first: "chat messages 65 %, models 10 %, …". */
  describe() {
    const appended = this.total - this.remaining;
    return [...this.counts]
      .sort((a, b) => b[1] - a[1])
      .map(([category, n]) => `${category} ${fmt((n / Math.max(appended, 1)) * 100)} %`)
      .join(', ');
  }
}

/** `log` taking at most the budget's events: an append past it throws LogFull and appends nothing. */
const sizedLog = (log: EventLog, budget: EventBudget): EventLog => ({
  ...log,
  append: async (stream, events, expectedVersion, causes) => {
    budget.take(events);
    try {
      const appended = await log.append(stream, events, expectedVersion, causes);
      budget.count(events);
      return appended;
    } catch (error) {
      budget.giveBack(events);
      throw error;
    }
  },
});

export type MixedLog = {
  /** Events appended: `total`, unless a life failed. */
  readonly events: number;
  /** "chat messages 65 %, models 10 %, …", as appended. */
  readonly mix: string;
  readonly seedMs: number;
  /** The highest position in the log. */
  readonly head: bigint;
};

/**
 * Writes a log of exactly `total` events of a realistic mix (bench/projectLife.ts: projects with
 * skills, a knowledge base and its documents, a trained model, agents, a chatbot and its
 * conversations, updates and deletes) into the stores `config` names, opened as the service opens
 * them (src/stores.ts: the log with its sealing of secrets, the blob store). Every command goes
 * through the service's command runner and deciders, so the events are the service's own. Lives of
 * projects run 64 at a time; the last ones are cut where the log is full.
 */
export const seedMixedLog = async (config: Config, total: number): Promise<MixedLog> => {
  const started = performance.now();
  const stores = await openStores(config, pino({ level: 'silent' }), systemClock, { poll: false });
  const budget = new EventBudget(total);
  // As the service runs commands on a log with other writers (src/app.ts); here this process is the only one.
  const commands = commandRunner(sizedLog(stores.log, budget), {
    trustCachedStreams: !stores.log.soleWriter,
    cacheSize: 20_000,
  });
  const incoming = path.join(config.dataDir, 'files', 'incoming');
  fs.mkdirSync(incoming, { recursive: true });
  const log: LifeLog = {
    run: (stream, aggregate, decide) => commands.run(stream, aggregate, decide),
    storeBlob: async (bytes, format) => {
      const digest = crypto.createHash('sha256').update(bytes).digest('hex');
      const temp = path.join(incoming, `${crypto.randomUUID()}.${format}`);
      await fs.promises.writeFile(temp, bytes);
      await stores.blobs.put(temp, digest, format);
      return digest;
    },
  };
  let next = 0;
  const lives = async () => {
    while (!budget.spent)
      await new ProjectLife(log, next++, MIX_SEED).live().catch((error: unknown) => {
        if (!(error instanceof LogFull)) throw error;
      });
  };
  const progress =
    total >= 1_000_000
      ? setInterval(
          () =>
            process.stderr.write(`seeding the mixed log: ${fmt(commands.stats().appendedEvents)} events\n`),
          60_000,
        )
      : undefined;
  try {
    await Promise.all(Array.from({ length: LIVES_IN_FLIGHT }, lives));
    const head = await stores.log.head();
    return {
      events: head.events,
      mix: budget.describe(),
      seedMs: performance.now() - started,
      head: head.position,
    };
  } finally {
    clearInterval(progress);
    await stores.close();
  }
};
