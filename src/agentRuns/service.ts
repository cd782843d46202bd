import crypto from 'node:crypto';
import {
  AgentRunError,
  AgentSetupError,
  canonicalSkillKind,
  InvalidMessagesError,
  normalizeMessages,
  planAgentRun,
  runAgent,
  type AgentRunEvent as LoopEvent,
  type AgentSkill,
  type KnowledgeBaseSearchPort,
  type SqlToolPort,
} from '../agentloop';
import { requireAgent } from '../agents/state';
import { settled, type AppContext } from '../context';
import {
  createLlmClient,
  LlmConfigError,
  providerProblem,
  summarizeLlmSettings,
  type ChatMessage,
  type LlmClient,
  type LlmDefaults,
  type LlmEngineResolver,
  type LlmSettings,
} from '../llm';
import { projectAggregate } from '../projects/aggregate';
import type { ProjectDirectory } from '../projects/directory';
import { projectStream } from '../projects/state';
import { badGateway, conflict, DomainError, invalid, isDomainError, notFound } from '../shared/errors';
import { findByRef } from '../shared/params';
import { skillById } from '../skills/state';
import { decideThreadTurn } from './decider';
import { presentRun, presentStep } from './present';
import { runRow, runRowsOfAgent, stepRowsOfRun } from './projection';
import { runRecorder } from './recorder';
import { runReplay, type ReplayPorts } from './replay';
import { runStream, THREAD_MEMORY_TURNS, threadAggregate, threadStream } from './state';

/** What runs need beyond the log: the tools' data, and where LLM settings come from. */
export type AgentRunPorts = {
  readonly sql: SqlToolPort;
  /** A project's knowledge bases, searched by name (`kb`, or `project.kb` for another project's). */
  readonly kb?: (project: string) => KnowledgeBaseSearchPort;
  /** A named ML engine's handler and real settings (CREATE ML_ENGINE). */
  readonly engines: LlmEngineResolver;
  /** OPENAI_BASE_URL, OPENAI_API_KEY, LLM_DEFAULT_MODEL. */
  readonly defaults: LlmDefaults;
  readonly requestTimeoutMs: number;
  /** What a replay reads the agent's SQL with (never a model). */
  readonly replay: ReplayPorts;
};

export type CompletionRequest = {
  readonly project: string;
  readonly agent: string;
  readonly messages: unknown;
  /** A conversation the server keeps: its earlier turns are the run's memory. */
  readonly threadId?: string;
  /** A SQL query's `USING …`: settings for this run only. */
  readonly overrides?: Record<string, unknown>;
  /** Which door the question came in by (rest, sql, mysql, chatbot, mcp, a2a). */
  readonly via: string;
  /** The run's trace id, when the door names it (A2A: the task's id); else a new UUID. */
  readonly traceId?: string;
};

export type CompletionHandlers = {
  readonly signal?: AbortSignal;
  /** Each step as it happens (after it is recorded). */
  readonly onStep?: (event: LoopEvent) => void;
  /** Answer text as the model produces it; given, the model is called in streaming mode. */
  readonly onText?: (text: string) => void;
  /** Answer only once the run is in the read model too (SQL reads its runs next). */
  readonly waitForRecord?: boolean;
};

export type Completion = {
  readonly traceId: string;
  readonly answer: string;
  readonly sql: readonly string[];
  readonly context: readonly unknown[];
};

/** A run that could not answer, as an HTTP problem; `runKind` says why (for a stream's error event). */
export class AgentRunProblem extends DomainError {
  constructor(
    problem: DomainError,
    readonly runKind: AgentRunError['kind'],
  ) {
    super(problem.kind, problem.title, problem.detail, problem.retryAfterSeconds);
  }
}

/** Why a run could not answer, as an HTTP problem: which side failed, and the trace to look it up. */
export const runFailure = (error: AgentRunError, traceId: string): DomainError => {
  const detail = `${error.message} (trace_id ${traceId})`;
  switch (error.kind) {
    case 'tool_errors':
    case 'max_steps':
    case 'empty_answer':
    case 'internal':
      return badGateway(detail, 'Agent gave no answer');
    default:
      return providerProblem(error.kind, detail, {
        timedOut: 'Agent timed out',
        aborted: { title: 'Run cancelled', detail },
      });
  }
};

/** The request's own mistakes (messages, settings, skills) are 400s naming what is wrong. */
const setupProblem = (error: unknown): unknown => {
  if (error instanceof InvalidMessagesError) return invalid(error.message, 'Invalid messages');
  if (error instanceof LlmConfigError) return invalid(error.message, 'Invalid LLM settings');
  if (error instanceof AgentSetupError) return invalid(error.message, 'Invalid agent skills');
  return error;
};

/** Agents that answer: each completion is a run recorded on its own stream, step by step. */
export const agentRunsService = (ctx: AppContext, projects: ProjectDirectory, ports: AgentRunPorts) => {
  // One client per provider endpoint and key, so runs reuse its keep-alive connections (a new client
  // per run paid a TCP handshake per model call). In memory only; bounded.
  const clients = new Map<string, LlmClient>();
  /** Runs executing in this process now (GET /api/metrics). */
  let inFlight = 0;
  const clientFor = (settings: LlmSettings) => {
    const key = JSON.stringify([
      settings.provider,
      settings.baseUrl,
      settings.apiKey,
      settings.apiVersion,
      settings.temperature,
      settings.maxTokens,
    ]);
    let client = clients.get(key);
    if (!client) {
      client = createLlmClient(settings, { requestTimeoutMs: ports.requestTimeoutMs });
      if (clients.size >= 64) clients.delete(clients.keys().next().value as string);
      clients.set(key, client);
    }
    return client;
  };

  /** The agent as the project's stream holds it (real settings), with its skills resolved. */
  const loadAgent = async (projectName: string, agentRef: string) => {
    const project = await projects.require(projectName);
    const { state } = await ctx.commands.load(projectStream(project.name), projectAggregate);
    const agent = requireAgent(state.agents, agentRef);
    const skills: AgentSkill[] = agent.skills.flatMap((link) => {
      const skill = skillById(state.skills, link.skillId);
      return skill
        ? [{ name: skill.name, type: skill.type, params: skill.params, linkParameters: link.parameters }]
        : [];
    });
    return { project, agent, skills };
  };

  /**
   * A run is on the log when its answer goes out. The answer need not wait for the read model as
   * well (that would add a projection batch to every completion): reads of runs catch the read
   * model up first (`GET …/runs`), and SQL callers, which read runs next in SQL, wait.
   */
  const recorded = async (position: bigint | null, wait: boolean) => {
    if (wait) await settled(ctx, position);
    else void ctx.projections.catchUp().catch(() => undefined);
  };

  /** The read model includes every run this process recorded (a failed projection is reported elsewhere). */
  const caughtUp = () => ctx.projections.catchUp().catch(() => undefined);

  /** A thread's earlier turns, then this request's messages, as one conversation. */
  const withThread = async (request: CompletionRequest, agentName: string, projectName: string) => {
    if (request.threadId === undefined) return request.messages;
    const asked = normalizeMessages(request.messages);
    const { state } = await ctx.commands.load(
      threadStream(projectName, agentName, request.threadId),
      threadAggregate,
    );
    const remembered: ChatMessage[] = state.turns.flatMap((t) => [
      { role: 'user', content: t.question },
      { role: 'assistant', content: t.answer },
    ]);
    return [...remembered, ...asked.history, { role: 'user', content: asked.question }];
  };

  /**
   * Everything that can be refused before anything runs (unknown project or agent, bad messages,
   * settings or skills: 404/400), then the run itself, recorded as it goes.
   */
  const prepare = async (request: CompletionRequest) => {
    const { project, agent, skills } = await loadAgent(request.project, request.agent);
    const planned = await (async () => {
      const messages = await withThread(request, agent.name, project.name);
      return planAgentRun({
        agent: { modelName: agent.modelName, provider: agent.provider, params: agent.params, skills },
        messages,
        overrides: request.overrides,
        ports: { sql: ports.sql, kb: ports.kb?.(project.name) },
        llm: { defaults: ports.defaults, engines: ports.engines },
      });
    })().catch((error: unknown) => {
      throw setupProblem(error);
    });
    const traceId = request.traceId ?? crypto.randomUUID();
    const summary = summarizeLlmSettings(planned.settings);

    const execute = async (handlers: CompletionHandlers = {}): Promise<Completion> => {
      const recorder = runRecorder(ctx, traceId, {
        traceId,
        projectId: project.id,
        project: project.name,
        agentId: Number(agent.id),
        agent: agent.name,
        agentVersion: agent.version.toString(),
        question: planned.run.question,
        historyMessages: planned.run.history.length,
        threadId: request.threadId ?? null,
        via: request.via,
        llm: {
          provider: summary.provider,
          model: summary.model,
          baseUrl: summary.baseUrl ?? null,
          engine: summary.engine ?? null,
          keyProvided: summary.apiKeySet,
        },
      });
      const llm = clientFor(planned.settings);
      inFlight++;
      try {
        const result = await runAgent({
          ...planned.run,
          llm,
          signal: handlers.signal,
          onEvent: async (event) => {
            await recorder.record(event);
            handlers.onStep?.(event);
          },
          ...(handlers.onText ? { onTextDelta: (d: { text: string }) => handlers.onText!(d.text) } : {}),
        });
        if (request.threadId !== undefined) {
          const stream = threadStream(project.name, agent.name, request.threadId);
          const turn = await ctx.commands.run(stream, threadAggregate, () =>
            decideThreadTurn({
              threadId: request.threadId!,
              project: project.name,
              agent: agent.name,
              traceId,
              question: planned.run.question,
              answer: result.answer,
              at: ctx.clock().toISOString(),
            }),
          );
          await settled(ctx, turn.lastPosition);
        }
        await recorded(recorder.lastPosition(), handlers.waitForRecord ?? false);
        return { traceId, answer: result.answer, sql: result.sql, context: result.context };
      } catch (error) {
        if (error instanceof AgentRunError) {
          await recorded(recorder.lastPosition(), handlers.waitForRecord ?? false).catch(() => undefined);
          throw new AgentRunProblem(runFailure(error, traceId), error.kind);
        }
        if (isDomainError(error)) throw error;
        throw setupProblem(error);
      } finally {
        inFlight--;
      }
    };
    return { traceId, question: planned.run.question, execute };
  };

  const requireRunOf = async (projectName: string, agentRef: string, traceId: string) => {
    const { project, agent } = await loadAgent(projectName, agentRef);
    await caughtUp();
    const row = await runRow(ctx.duck, traceId);
    if (!row || row.PROJECT_ID !== BigInt(project.id) || row.AGENT_ID !== agent.id)
      throw notFound(`Agent ${agent.name} has no run ${traceId}`, 'Run not found');
    return row;
  };

  const replayRun = runReplay(ctx, ports.replay);

  /** The database each SQL tool of the agent reads unqualified names in: its skill's (else the project). */
  const toolDatabases = (project: string, skills: readonly AgentSkill[]) => {
    const sql = skills.filter((s) => canonicalSkillKind(s.type) === 'sql');
    const databaseOf = (s: AgentSkill) =>
      typeof s.params.database === 'string' && s.params.database !== '' ? s.params.database : project;
    const suffix = (name: string) =>
      name
        .replace(/[^a-zA-Z0-9_-]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 30);
    return (tool: string) => {
      const named = sql.find((s) => tool.endsWith(`_${suffix(s.name)}`));
      const skill = named ?? sql[0];
      return skill ? databaseOf(skill) : project;
    };
  };

  /**
   * The conversation up to and including a run's turn: the turns of its thread before it (when it
   * was asked in one), then its own question and answer. Turns a client sent as history were not
   * recorded (only how many): they are not part of it.
   */
  const conversationUpTo = async (projectName: string, agentRef: string, traceId: string) => {
    const { project, agent } = await loadAgent(projectName, agentRef);
    const { events } = await ctx.log.readStream(runStream(traceId), 0n);
    const started = events.find((e) => e.type === 'AgentRunStarted');
    if (
      started?.type !== 'AgentRunStarted' ||
      started.data.projectId !== project.id ||
      BigInt(started.data.agentId) !== agent.id
    )
      throw notFound(`Agent ${agent.name} has no run ${traceId}`, 'Run not found');
    const answered = events.find((e) => e.type === 'AgentRunAnswered');
    if (answered?.type !== 'AgentRunAnswered')
      throw conflict(`Run ${traceId} has no answer to continue from`, 'Run not answered');
    const own = { question: started.data.question, answer: answered.data.answer, traceId };
    let earlier: (typeof own)[] = [];
    if (started.data.threadId !== null) {
      const thread = await ctx.log.readStream(
        threadStream(project.name, agent.name, started.data.threadId),
        0n,
      );
      const turns = thread.events.flatMap((e) =>
        e.type === 'AgentThreadTurn'
          ? [{ question: e.data.question, answer: e.data.answer, traceId: e.data.traceId }]
          : [],
      );
      const at = turns.findIndex((t) => t.traceId === traceId);
      earlier = at < 0 ? [] : turns.slice(0, at);
    }
    return {
      project,
      agent,
      threadId: started.data.threadId,
      historyNotKept: started.data.threadId === null ? started.data.historyMessages : 0,
      turns: [...earlier, own].slice(-THREAD_MEMORY_TURNS),
    };
  };

  return {
    prepare,
    /**
     * A run replayed from its events, no model called: its steps and answer as recorded, each SQL
     * read again as of the position it ran at and as of now, the steps whose answer differs named.
     */
    replay: async (projectName: string, agentRef: string, traceId: string) => {
      const { project, agent, skills } = await loadAgent(projectName, agentRef);
      return replayRun(project, agent, traceId, toolDatabases(project.name, skills));
    },

    /**
     * Continues a conversation from an earlier turn: a new thread (`thread_id`, or one made up)
     * holding the conversation up to and including run `traceId`, then the question asked in it.
     * The original thread is left as it is.
     */
    fork: async (
      projectName: string,
      agentRef: string,
      traceId: string,
      request: { messages: unknown; threadId?: string },
      handlers: CompletionHandlers = {},
    ) => {
      const from = await conversationUpTo(projectName, agentRef, traceId);
      try {
        normalizeMessages(request.messages);
      } catch (error) {
        throw setupProblem(error);
      }
      const threadId = request.threadId ?? `fork-${crypto.randomUUID()}`;
      const stream = threadStream(from.project.name, from.agent.name, threadId);
      const seeded = await ctx.commands.run(stream, threadAggregate, (state) => {
        if (state.turns.length > 0)
          throw conflict(`Thread ${threadId} exists already: a fork starts a new thread`, 'Thread exists');
        return from.turns.flatMap((t) =>
          decideThreadTurn({
            threadId,
            project: from.project.name,
            agent: from.agent.name,
            traceId: t.traceId,
            question: t.question,
            answer: t.answer,
            at: ctx.clock().toISOString(),
          }),
        );
      });
      await settled(ctx, seeded.lastPosition);
      const completion = await (
        await prepare({
          project: from.project.name,
          agent: from.agent.name,
          messages: request.messages,
          threadId,
          via: 'rest',
        })
      ).execute(handlers);
      return {
        completion,
        threadId,
        forkedFrom: {
          traceId,
          threadId: from.threadId,
          turns: from.turns.length,
          historyNotKept: from.historyNotKept,
        },
      };
    },

    /** Runs executing in this process now. */
    inFlight: () => inFlight,
    /** Prepare and run in one go (REST without streaming, SQL). */
    complete: async (request: CompletionRequest, handlers: CompletionHandlers = {}) =>
      (await prepare(request)).execute(handlers),

    /** An agent's runs, newest first. */
    runs: async (projectName: string, agentRef: string, page: { before?: bigint; limit: number }) => {
      const { project, agent } = await loadAgent(projectName, agentRef);
      await caughtUp();
      return (await runRowsOfAgent(ctx.duck, project.id, Number(agent.id), page)).map(presentRun);
    },

    /** One run, step by step. */
    run: async (projectName: string, agentRef: string, traceId: string) => {
      const row = await requireRunOf(projectName, agentRef, traceId);
      return { ...presentRun(row), steps: (await stepRowsOfRun(ctx.duck, traceId)).map(presentStep) };
    },

    /** An agent by name or id exists in the project (routes check it before reading a body). */
    requireAgent: async (projectName: string, agentRef: string) => {
      await loadAgent(projectName, agentRef);
    },

    findAgentName: async (projectName: string, name: string) => {
      const project = await projects.find(projectName);
      if (!project) return undefined;
      const { state } = await ctx.commands.load(projectStream(project.name), projectAggregate);
      return findByRef(state.agents.values(), name)?.name;
    },
  };
};

export type AgentRunsService = ReturnType<typeof agentRunsService>;
