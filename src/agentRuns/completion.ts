import crypto from 'node:crypto';
import {
  AgentRunError,
  AgentSetupError,
  InvalidMessagesError,
  ModelCallRefused,
  planAgentRun,
  runAgent,
  type AgentRunEvent as LoopEvent,
  type RunAnswer,
} from '../engines/agentLoop';
import { settled, type AppContext } from '../context';
import {
  LlmConfigError,
  llmClientPool,
  providerProblem,
  summarizeLlmSettings,
  type ChatMessage,
  type LlmClient,
  type LlmSettings,
} from '../engines/llm';
import { describeRefusal, LlmBudgetExceeded, type SpendingPort } from '../llmBudgets/state';
import { badGateway, DomainError, invalid, isDomainError } from '../shared/errors';
import { callerOfRequest, type CallerOfRequest } from '../shared/requestContext';
import { withThread, type AgentLoader, type LoadedAgent } from './agentLookup';
import { decideThreadTurn } from './decider';
import type { AgentRunPorts } from './ports';
import { runRecorder } from './recorder';
import { threadAggregate, threadStream } from './state';

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

export type Completion = RunAnswer;

/** A run that could not answer, as an HTTP problem; `runKind` says why (for a stream's error event). */
export class AgentRunProblem extends DomainError {
  constructor(
    problem: DomainError,
    readonly runKind: AgentRunError['kind'],
    /** The run that failed: its record is on `agent-run-<traceId>`. */
    readonly traceId: string,
  ) {
    super(problem.kind, problem.title, problem.detail, problem.retryAfterSeconds);
  }
}

/** Why a run could not answer, as an HTTP problem: which side failed, and the trace to look it up. */
const runFailure = (error: AgentRunError, traceId: string): DomainError => {
  const detail = `${error.message} (trace_id ${traceId})`;
  switch (error.kind) {
    case 'refused':
      return new LlmBudgetExceeded(detail);
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
export const setupProblem = (error: unknown): unknown => {
  if (error instanceof InvalidMessagesError) return invalid(error.message, 'Invalid messages');
  if (error instanceof LlmConfigError) return invalid(error.message, 'Invalid LLM settings');
  if (error instanceof AgentSetupError) return invalid(error.message, 'Invalid agent skills');
  return error;
};

/**
 * A run is on the log when its answer goes out. The answer need not wait for the read model as
 * well (that would add a projection batch to every completion): reads of runs catch the read
 * model up first (`GET …/runs`), and SQL callers, which read runs next in SQL, wait.
 */
const recorded = async (ctx: AppContext, position: bigint | null, wait: boolean) => {
  if (wait) await settled(ctx, position);
  else void ctx.projections.catchUp().catch(() => undefined);
};

/** A run that passed every check: who asks whom, what, and with which settings. */
type PreparedRun = LoadedAgent & {
  readonly request: CompletionRequest;
  readonly planned: Awaited<ReturnType<typeof planAgentRun>>;
  readonly traceId: string;
  readonly summary: ReturnType<typeof summarizeLlmSettings>;
  /** Who asked: recorded with the run, and whose LLM budgets its model calls count against. */
  readonly who: CallerOfRequest;
};

/** What executing a run needs: the log, the model clients, the budgets, and the count of runs executing now. */
type RunDeps = {
  readonly ctx: AppContext;
  readonly clientFor: (settings: LlmSettings) => LlmClient;
  readonly spending: SpendingPort;
  readonly running: { count: number };
};

/** The tokens a model call's messages will cost, estimated before it is sent: four characters a token. */
const estimatedTokens = (messages: readonly ChatMessage[]) => Math.ceil(JSON.stringify(messages).length / 4);

/**
 * Each model call of a run is admitted by the LLM budgets of whoever asked (user, token, project)
 * before it is made, as a query's LLM calls are: a refused call ends the run (kind `refused`, the
 * refusal on the log under the run's trace id). What was admitted is held until the run's records
 * are in the read model, where they count as spent (docs/agents.md "LLM budgets").
 */
const budgetGate = (spending: SpendingPort, run: PreparedRun) => {
  const releases: ((recordedUpTo: bigint | null) => void)[] = [];
  const what = `agent ${run.project.name}.${run.agent.name}`;
  const beforeModelCall = async (messages: readonly ChatMessage[]) => {
    const admission = await spending({
      queryId: run.traceId,
      what,
      who: run.who,
      project: run.project.name,
      plan: { calls: 1, tokens: estimatedTokens(messages), before: releases.length },
      // A run's calls are bounded by its steps; only a budget's calls_per_query caps them further.
      serverCap: Number.POSITIVE_INFINITY,
    });
    if (admission.refusal) throw new ModelCallRefused(describeRefusal(admission.refusal, what));
    releases.push(admission.release);
  };
  return {
    beforeModelCall,
    release: (recordedUpTo: bigint | null) => releases.forEach((release) => release(recordedUpTo)),
  };
};

/** What the run's first event says of it. */
const startedOf = ({ request, project, agent, planned, traceId, summary, who }: PreparedRun) => ({
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
  caller: who.caller,
  llm: {
    provider: summary.provider,
    model: summary.model,
    baseUrl: summary.baseUrl ?? null,
    engine: summary.engine ?? null,
    keyProvided: summary.apiKeySet,
  },
});

/** The run's question and answer as its thread's next turn, in the read model before the answer goes out. */
const recordThreadTurn = async (ctx: AppContext, run: PreparedRun, threadId: string, answer: string) => {
  const { project, agent } = run;
  const stream = threadStream(project.name, agent.name, threadId);
  const turn = await ctx.commands.run(stream, threadAggregate, () =>
    decideThreadTurn({
      threadId,
      project: project.name,
      agent: agent.name,
      traceId: run.traceId,
      question: run.planned.run.question,
      answer,
      at: ctx.clock().toISOString(),
    }),
  );
  await settled(ctx, turn.lastPosition);
};

/** Runs a prepared run, recorded step by step on its own stream. */
const executeRun = async (
  { ctx, clientFor, spending, running }: RunDeps,
  run: PreparedRun,
  handlers: CompletionHandlers = {},
): Promise<Completion> => {
  const { request, planned, traceId } = run;
  const recorder = runRecorder(ctx, traceId, startedOf(run));
  const llm = clientFor(planned.settings);
  const gate = budgetGate(spending, run);
  running.count++;
  try {
    const result = await runAgent({
      ...planned.run,
      llm,
      beforeModelCall: gate.beforeModelCall,
      signal: handlers.signal,
      onEvent: async (event) => {
        await recorder.record(event);
        handlers.onStep?.(event);
      },
      ...(handlers.onText ? { onTextDelta: (d: { text: string }) => handlers.onText!(d.text) } : {}),
    });
    if (request.threadId !== undefined) await recordThreadTurn(ctx, run, request.threadId, result.answer);
    await recorded(ctx, recorder.lastPosition(), handlers.waitForRecord ?? false);
    return { traceId, answer: result.answer, sql: result.sql, context: result.context };
  } catch (error) {
    if (error instanceof AgentRunError) {
      await recorded(ctx, recorder.lastPosition(), handlers.waitForRecord ?? false).catch(() => undefined);
      throw new AgentRunProblem(runFailure(error, traceId), error.kind, traceId);
    }
    if (isDomainError(error)) throw error;
    throw setupProblem(error);
  } finally {
    running.count--;
    // The run's model calls are recorded: once the read model has them they count as spent.
    gate.release(recorder.lastPosition());
  }
};

/**
 * Completions: `prepare` refuses everything that can be refused before anything runs (unknown
 * project or agent, bad messages, settings or skills: 404/400), then hands back the run itself,
 * recorded as it goes; `inFlight` counts the runs executing in this process now (GET /api/metrics).
 */
export const agentCompletions = (ctx: AppContext, ports: AgentRunPorts, loadAgent: AgentLoader) => {
  const deps: RunDeps = {
    ctx,
    clientFor: llmClientPool({ requestTimeoutMs: ports.requestTimeoutMs }),
    spending: ports.spending,
    running: { count: 0 },
  };

  const prepare = async (request: CompletionRequest) => {
    const { project, agent, skills } = await loadAgent(request.project, request.agent);
    const planned = await (async () => {
      const messages = await withThread(ctx, request, agent.name, project.name);
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
    const who = callerOfRequest();
    const run: PreparedRun = { request, project, agent, skills, planned, traceId, summary, who };
    const execute = async (handlers: CompletionHandlers = {}): Promise<Completion> =>
      executeRun(deps, run, handlers);
    return { traceId, question: planned.run.question, execute };
  };

  return { prepare, inFlight: () => deps.running.count };
};
