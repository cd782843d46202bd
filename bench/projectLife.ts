import type { KnowledgeBaseDocumentsInserted } from '../events';
import { decideAgent } from '../src/agents/decider';
import { decideChatbot } from '../src/chatbots/decider';
import { findChatbot } from '../src/chatbots/state';
import { decideMessage, type MessageEvent } from '../src/chatMessages/decider';
import { messageAggregate, messageKey, messageStream, type MessageState } from '../src/chatMessages/state';
import { HASHING_DIMENSIONS } from '../src/engines/search/hashingEmbedder';
import { FACTS, type Aggregate, type CommandOutcome } from '../src/eventlog/commands';
import type { NewEvent } from '../src/eventlog/types';
import { decideKnowledgeBase } from '../src/knowledgeBases/decider';
import { chunksOf, type KbDocument } from '../src/knowledgeBases/pendingChunks';
import { knowledgeBaseDefinition } from '../src/knowledgeBases/schemas';
import { documentsStream, findKnowledgeBase, settingsOf } from '../src/knowledgeBases/state';
import { decideModel, decideTrainingProgress } from '../src/models/decider';
import { findModel, modelTrainingStream, trainingProgressAggregate } from '../src/models/state';
import { projectAggregate } from '../src/projects/aggregate';
import { decideProject } from '../src/projects/decider';
import { decideSkill } from '../src/skills/decider';
import { projectStream, type ProjectAggregate } from '../src/shared/projectState';
import { seededRandom } from '../src/engines/ml/random';

/**
 * What a project's life appends through: the service's command runner (src/eventlog/commands.ts)
 * and its blob store.
 */
export type LifeLog = {
  run<S>(
    stream: string,
    aggregate: Aggregate<S>,
    decide: (state: S) => readonly NewEvent[],
  ): Promise<CommandOutcome<S>>;
  /** Stores bytes content-addressed, as the service stores a KB's documents or a model's artifact: their digest. */
  storeBlob(bytes: string, format: string): Promise<string>;
};

/** A command on a stream, decided on the stream's state. */
type Decision<S> = (state: S) => readonly NewEvent[];

const WORDS = (
  'order invoice customer refund shipping delay account password billing plan upgrade discount ' +
  'warehouse stock product return policy payment card address delivery tracking support agent ' +
  'question answer model forecast churn revenue region quarter report dashboard table query'
).split(' ');

/** Where the generated lives start; each project starts a minute after the one before. */
const EPOCH = Date.UTC(2026, 0, 1);

/** A training's progress reports (src/models/training.ts reports about twenty at most). */
const TRAINING_REPORTS = [
  ['reading', 0],
  ['encoding', 10],
  ['training', 25],
  ['training', 50],
  ['training', 75],
  ['calibrating', 95],
] as const;

/**
 * One project's life, decided by the service's own deciders and appended by its command runner, so
 * the events are exactly those the service appends for the same requests: the project; its skills,
 * a knowledge base and a model; the knowledge base's documents (a JSON-lines blob each insert, as
 * src/knowledgeBases/documents.ts stores them), the agents using the skills, the model's training
 * (started, progress reports on the training's own stream, a small artifact, trained and
 * activated, as src/models/training.ts records it), a chatbot on the first agent; a conversation,
 * each message on a stream of its own (received, claimed, answered, delivered, as the chat
 * processor records it); then updates and deletes, for some projects its own deletion and cascade.
 *
 * Per project, on average: chat messages 40 events (10 messages), a model in 60 % of projects (10
 * events each), a knowledge base in half (with 5 inserts of 3 documents, a quarter of them also a
 * deletion of documents), 3.5 skills, 2 agents, 1 chatbot, 2.3 updates, and deletes (a skill in 30 %
 * of projects, an agent, the model or the knowledge base in 10 %, the project with its cascade in
 * 15 %): about 60 events, two thirds of them chat messages.
 *
 * The commands of a step on one stream are sent together: the command runner decides them in turn
 * and appends them together (its group commit, as for concurrent requests), a command that names a
 * resource created in the same append waiting for the next. So a life makes about 16 appends.
 * Every choice comes from a generator seeded with `seed` and the project's index: a project's
 * commands do not depend on how the lives running at once interleave (the ids its events carry,
 * which are log positions, do).
 */
export class ProjectLife {
  private readonly random: () => number;
  private readonly name: string;
  private time: number;
  private state: ProjectAggregate = projectAggregate.initialState();

  constructor(
    private readonly log: LifeLog,
    index: number,
    seed: number,
  ) {
    this.random = seededRandom(seed * 1_000_003 + index);
    this.name = `mix_${index}`;
    this.time = EPOCH + index * 60_000;
  }

  async live(): Promise<void> {
    const created = this.now();
    await this.onProject([
      (s) => decideProject({ type: 'CreateProject', data: { name: this.name }, metadata: created }, s),
    ]);
    const skills = Array.from({ length: this.between(2, 5) }, (_, k) => `skill_${k}`);
    const knowledgeBase = this.chance(0.5) ? 'kb_0' : null;
    const model = this.chance(0.6) ? 'model_0' : null;
    await this.onProject([
      ...skills.map((name) => this.createSkill(name)),
      ...(knowledgeBase ? [this.createKnowledgeBase(knowledgeBase)] : []),
      ...(model ? [this.defineModel(model)] : []),
    ]);
    const agents = Array.from({ length: this.between(1, 3) }, (_, k) => `agent_${k}`);
    await Promise.all([
      this.onProject([
        ...agents.map((name) => this.createAgent(name, skills)),
        ...(model ? [this.startTraining(model)] : []),
      ]),
      knowledgeBase ? this.insertDocuments(knowledgeBase) : undefined,
    ]);
    const artifact = model ? await this.reportTraining(model) : undefined;
    const webhookToken = this.hex(32);
    await this.onProject([
      ...(model && artifact ? [this.completeTraining(model, artifact)] : []),
      this.createChatbot('support_bot', agents[0]!, webhookToken),
    ]);
    await this.converse('support_bot', this.between(4, 16));
    await this.onProject([
      ...this.updates(skills, agents, model),
      ...this.deletes(skills, agents, model, knowledgeBase),
    ]);
  }

  /** The next command's time: a few seconds after the last. */
  private now() {
    this.time += 1_000 + Math.floor(this.random() * 29_000);
    return { now: new Date(this.time) };
  }

  private between(low: number, high: number) {
    return low + Math.floor(this.random() * (high - low + 1));
  }

  private chance(p: number) {
    return this.random() < p;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private words(n: number) {
    return Array.from({ length: n }, () => this.pick(WORDS)).join(' ');
  }

  private hex(length: number) {
    return Array.from({ length }, () => Math.floor(this.random() * 16).toString(16)).join('');
  }

  /** A random id in UUID form (claims, answers), from the life's generator. */
  private uuid() {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /** Commands sent together to one stream: the state after the last of them. */
  private async together<S>(stream: string, aggregate: Aggregate<S>, decisions: readonly Decision<S>[]) {
    const outcomes = await Promise.all(decisions.map((decide) => this.log.run(stream, aggregate, decide)));
    return outcomes.at(-1)?.state;
  }

  /** Commands sent together to the project's stream; the project's state after them is kept. */
  private async onProject(decisions: readonly Decision<ProjectAggregate>[]) {
    this.state = (await this.together(projectStream(this.name), projectAggregate, decisions)) ?? this.state;
  }

  private projectId() {
    if (this.state.project.status !== 'live') throw new Error(`${this.name} must be live`);
    return Number(this.state.project.id);
  }

  private createSkill(name: string): Decision<ProjectAggregate> {
    const data = this.chance(0.6)
      ? {
          name,
          type: 'sql',
          params: { database: 'shop', tables: ['orders', 'customers'], description: this.words(8) },
        }
      : { name, type: 'knowledge_base', params: { source: 'kb_0', description: this.words(8) } };
    const metadata = this.now();
    return (s) => decideSkill({ type: 'CreateSkill', data, metadata }, s);
  }

  private createKnowledgeBase(name: string): Decision<ProjectAggregate> {
    const data = { ...knowledgeBaseDefinition(name, {}), ifNotExists: false };
    const metadata = this.now();
    return (s) => decideKnowledgeBase({ type: 'CreateKnowledgeBase', data, metadata }, s);
  }

  /**
   * Inserts of three documents each, recorded as the service's `insert` (src/knowledgeBases/
   * documents.ts) records them: stored as a JSON-lines blob, then one event on the knowledge base's
   * stream naming it; a quarter of the knowledge bases then lose two documents.
   */
  private async insertDocuments(name: string) {
    const kb = findKnowledgeBase(this.state.knowledgeBases, name);
    if (!kb) throw new Error(`${this.name}.${name} must exist`);
    const { chunkSize, chunkOverlap } = settingsOf(kb);
    const chunking = { chunkSize, chunkOverlap };
    const dimensions = Number(kb.embeddingModel.dimensions ?? HASHING_DIMENSIONS);
    let count = 0;
    const inserts = Array.from({ length: this.between(2, 8) }, () => {
      const documents: KbDocument[] = Array.from({ length: 3 }, () => ({
        id: `doc_${count++}`,
        content: this.words(60),
        metadata: { source: this.pick(['faq', 'manual', 'ticket']) },
      }));
      return { documents, insertedAt: this.now().now.toISOString() };
    });
    const removed = this.chance(0.25) ? { ids: ['doc_0', 'doc_1'], at: this.now().now.toISOString() } : null;
    const events: NewEvent[] = [];
    for (const { documents, insertedAt } of inserts) {
      const documentsDigest = await this.log.storeBlob(
        documents.map((d) => JSON.stringify(d)).join('\n') + '\n',
        'jsonl',
      );
      const inserted: KnowledgeBaseDocumentsInserted = {
        type: 'KnowledgeBaseDocumentsInserted',
        data: {
          kbId: Number(kb.id),
          project: this.name,
          name: kb.name,
          documentsDigest,
          documents: documents.length,
          chunks: chunksOf(documents, chunking).length,
          chunking,
          embedding: { kind: 'hashing', dimensions },
          insertedAt,
        },
      };
      events.push(inserted);
    }
    if (removed)
      events.push({
        type: 'KnowledgeBaseDocumentsDeleted',
        data: { kbId: Number(kb.id), ids: removed.ids, deletedAt: removed.at },
      });
    await this.together(
      documentsStream(kb.id),
      FACTS,
      events.map((event) => () => [event]),
    );
  }

  /** CREATE MODEL … FROM shop (SELECT …) PREDICT target, trained by the built-in engine. */
  private defineModel(name: string): Decision<ProjectAggregate> {
    const data = {
      name,
      replace: false,
      target: this.pick(['churn', 'revenue', 'delay']),
      query: `SELECT * FROM shop.customers WHERE region = '${this.pick(WORDS)}'`,
      sourceDatabase: 'shop',
      options: {},
    };
    const metadata = this.now();
    return (s) => decideModel({ type: 'DefineModel', data, metadata }, s);
  }

  private startTraining(name: string): Decision<ProjectAggregate> {
    const metadata = this.now();
    return (s) =>
      decideModel({ type: 'StartTraining', data: { name, version: 1, trainer: 'bench-node' }, metadata }, s);
  }

  /** The training's progress reports, on its own stream, and its artifact stored: the artifact's digest and the rows. */
  private async reportTraining(name: string) {
    const version = findModel(this.state.models, name)?.versions.get(1);
    if (!version) throw new Error(`${this.name}.${name} must have its version 1`);
    const rows = this.between(500, 50_000);
    const projectId = this.projectId();
    const reports = TRAINING_REPORTS.map(
      ([phase, percent]): Decision<{ percent: number; phase: string | null }> => {
        const data = {
          projectId,
          project: this.name,
          name,
          version: 1,
          versionId: Number(version.id),
          phase,
          percent,
          rows,
        };
        const metadata = this.now();
        return (s) => decideTrainingProgress({ type: 'ReportTrainingProgress', data, metadata }, s);
      },
    );
    await this.together(modelTrainingStream(version.id), trainingProgressAggregate, reports);
    const accuracy = Math.round(this.random() * 1000) / 1000;
    const digest = await this.log.storeBlob(
      JSON.stringify({
        engine: 'mindledger',
        target: version.target,
        rows,
        weights: [accuracy, this.random()],
      }),
      'model.json',
    );
    return { digest, rows, accuracy };
  }

  private completeTraining(
    name: string,
    artifact: { digest: string; rows: number; accuracy: number },
  ): Decision<ProjectAggregate> {
    const data = {
      name,
      version: 1,
      artifactDigest: artifact.digest,
      accuracy: artifact.accuracy,
      metric: 'balanced_accuracy',
      columns: [
        { name: 'region', dtype: 'categorical', role: 'feature', importance: 1 },
        { name: 'tenure', dtype: 'integer', role: 'feature', importance: 0.4 },
      ],
      rows: artifact.rows,
      trainingMs: this.between(200, 20_000),
      task: 'classification' as const,
      targetType: 'categorical' as const,
      targetTypeSource: 'inferred' as const,
      targetDtype: 'binary',
    };
    const metadata = this.now();
    return (s) => decideModel({ type: 'CompleteTraining', data, metadata }, s);
  }

  private createAgent(name: string, skills: readonly string[]): Decision<ProjectAggregate> {
    const data = {
      name,
      modelName: 'gpt-4o-mini',
      provider: 'openai',
      params: { prompt_template: `Answer questions about ${this.words(4)}` },
      skills: [...new Set([this.pick(skills), this.pick(skills)])].map((ref) => ({ ref, parameters: {} })),
    };
    const metadata = this.now();
    return (s) => decideAgent({ type: 'CreateAgent', data, metadata }, s);
  }

  private createChatbot(name: string, agent: string, webhookToken: string): Decision<ProjectAggregate> {
    const data = {
      name,
      agentRef: agent,
      modelName: null,
      database: null,
      isRunning: true,
      params: {},
      webhookToken,
    };
    const metadata = this.now();
    return (s) => decideChatbot({ type: 'CreateChatbot', data, metadata }, s);
  }

  /**
   * `messages` messages on the built-in channel, each on a stream of its own, as the service records
   * them (src/chatMessages/service.ts `receive`, processor.ts): received, claimed, answered, delivered.
   */
  private async converse(chatbot: string, messages: number) {
    const bot = findChatbot(this.state.chatbots, chatbot);
    if (!bot) throw new Error(`${this.name}.${chatbot} must exist`);
    const projectId = this.projectId();
    const conversation = Array.from({ length: messages }, (_, k) => {
      const chatId = `chat_${k % 3}`;
      const externalId = `${this.name}_m${k}`;
      const key = messageKey(bot.id, 'builtin', chatId, externalId);
      const received = {
        messageId: key,
        chatbotId: Number(bot.id),
        projectId,
        project: this.name,
        chatbot: bot.name,
        channel: 'builtin' as const,
        chatId,
        user: `user_${k % 5}`,
        text: `${this.words(12)}?`,
        externalId,
        channelMessageId: externalId,
        threadId: null,
        receivedAt: this.now().now.toISOString(),
      };
      const claim = { claimId: this.uuid(), node: 'bench-node', leaseMs: 120_000 };
      const claimed = this.now();
      const answer = { claimId: claim.claimId, answerId: this.uuid(), text: this.words(30), traceId: null };
      const answered = this.now();
      const delivered = this.now();
      const steps: Decision<MessageState>[] = [
        (s): MessageEvent[] => decideMessage({ type: 'Receive', data: received }, s),
        (s) => decideMessage({ type: 'Claim', data: claim, metadata: claimed }, s),
        (s) => decideMessage({ type: 'Answer', data: answer, metadata: answered }, s),
        (s) =>
          decideMessage(
            { type: 'Deliver', data: { claimId: claim.claimId, externalId: null }, metadata: delivered },
            s,
          ),
      ];
      return { stream: messageStream(bot.id, key), steps };
    });
    await Promise.all(
      conversation.map(({ stream, steps }) => this.together(stream, messageAggregate, steps)),
    );
  }

  /** A skill's description (PUT), an agent's parameters, half the time the model's options. */
  private updates(skills: readonly string[], agents: readonly string[], model: string | null) {
    const skill = { ref: this.pick(skills), params: { description: this.words(10) } };
    const skillAt = this.now();
    const agent = { ref: this.pick(agents), params: { temperature: 0.2 } };
    const agentAt = this.now();
    const decisions: Decision<ProjectAggregate>[] = [
      (s) => decideSkill({ type: 'PutSkill', data: skill, metadata: skillAt }, s),
      (s) => decideAgent({ type: 'UpdateAgent', data: agent, metadata: agentAt }, s),
    ];
    if (model && this.chance(0.5)) {
      const modelAt = this.now();
      decisions.push((s) =>
        decideModel(
          { type: 'UpdateModelOptions', data: { name: model, options: { horizon: 7 } }, metadata: modelAt },
          s,
        ),
      );
    }
    return decisions;
  }

  /**
   * A skill in 30 % of projects (detached from the agents using it), an agent (stopping the chatbot
   * using it), the model or the knowledge base in 10 %, and 15 % of projects, with their cascade.
   */
  private deletes(
    skills: readonly string[],
    agents: readonly string[],
    model: string | null,
    knowledgeBase: string | null,
  ) {
    const decisions: Decision<ProjectAggregate>[] = [];
    if (this.chance(0.3)) {
      const data = { ref: skills.at(-1)! };
      const metadata = this.now();
      decisions.push((s) => decideSkill({ type: 'DeleteSkill', data, metadata }, s));
    }
    if (this.chance(0.1)) {
      const data = { ref: this.pick(agents) };
      const metadata = this.now();
      decisions.push((s) => decideAgent({ type: 'DeleteAgent', data, metadata }, s));
    }
    if (model && this.chance(0.1)) {
      const metadata = this.now();
      decisions.push((s) => decideModel({ type: 'DeleteModel', data: { name: model }, metadata }, s));
    }
    if (knowledgeBase && this.chance(0.1)) {
      const data = { name: knowledgeBase, ifExists: false };
      const metadata = this.now();
      decisions.push((s) => decideKnowledgeBase({ type: 'DeleteKnowledgeBase', data, metadata }, s));
    }
    if (this.chance(0.15)) {
      const metadata = this.now();
      decisions.push((s) => decideProject({ type: 'DeleteProject', data: { name: this.name }, metadata }, s));
    }
    return decisions;
  }
}
