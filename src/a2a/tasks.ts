import type { RecordedEvent } from '../../events';
import type { AppContext } from '../context';
import type { LiveTasks } from './live';
import {
  Role,
  TaskState,
  UnsupportedOperationError,
  type Artifact,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type Part,
  type Task,
  type TaskStore,
} from './sdk';

/**
 * An A2A task is one agent run: its id is the run's trace id, its context the run's thread
 * (`thread_id`), its state and answer what the run's own stream (`agent-run-<trace id>`) says.
 */

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
export const isTerminal = (task: Task | undefined) =>
  task?.status !== undefined && TERMINAL.has(task.status.state);

/** Where a task's run is, in its metadata: the same names REST and SQL use. */
export const RUN_META_KEY = 'io.mindledger/run';

/** A trace id is a UUID: anything else names no run (and never reaches the log as a stream name). */
const TRACE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isTraceId = (id: string) => TRACE_ID.test(id);

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  mediaType: 'text/plain',
  filename: '',
  metadata: undefined,
});

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  mediaType: 'application/json',
  filename: '',
  metadata: undefined,
});

export const agentMessage = (
  taskId: string,
  contextId: string,
  messageId: string,
  text: string,
): Message => ({
  messageId,
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** The answer as the task's one artifact: its text, then the SQL it ran and its context as data. */
export const answerArtifact = (
  traceId: string,
  answer: { answer: string; sql: readonly string[]; context: readonly unknown[] },
): Artifact => ({
  artifactId: `${traceId}:answer`,
  name: 'answer',
  description: "The agent's answer",
  parts: [
    textPart(answer.answer),
    ...(answer.sql.length > 0 || answer.context.length > 0
      ? [dataPart({ sql: [...answer.sql], context: [...answer.context] })]
      : []),
  ],
  metadata: undefined,
  extensions: [],
});

/** The agent whose tasks a store holds (a run of another agent is no task of this one). */
export type AgentKey = { readonly projectId: number; readonly agentId: number };

const parseContext = (text: string): unknown[] => {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
};

/** The task a run's events make, or undefined when they are no run of this agent. */
const taskOfRun = (events: readonly RecordedEvent[], agent: AgentKey): Task | undefined => {
  const started = events.find((e) => e.type === 'AgentRunStarted');
  if (started?.type !== 'AgentRunStarted') return undefined;
  const s = started.data;
  if (s.projectId !== agent.projectId || s.agentId !== agent.agentId) return undefined;
  const traceId = s.traceId;
  const contextId = s.threadId ?? '';
  const question: Message = {
    messageId: `${traceId}:question`,
    contextId,
    taskId: traceId,
    role: Role.ROLE_USER,
    parts: [textPart(s.question)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const metadata = {
    [RUN_META_KEY]: {
      trace_id: traceId,
      stream: `agent-run-${traceId}`,
      via: s.via,
      project: s.project,
      agent: s.agent,
      position: Number(started.meta.position),
    },
  };
  const base = { id: traceId, contextId, metadata };
  for (const e of events) {
    if (e.type === 'AgentRunAnswered') {
      const reply = agentMessage(traceId, contextId, `${traceId}:answer`, e.data.answer);
      return {
        ...base,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: reply, timestamp: e.data.answeredAt },
        artifacts: [
          answerArtifact(traceId, {
            answer: e.data.answer,
            sql: e.data.sql,
            context: parseContext(e.data.context),
          }),
        ],
        history: [question, reply],
      };
    }
    if (e.type === 'AgentRunFailed') {
      const cancelled = e.data.kind === 'aborted';
      const reply = agentMessage(
        traceId,
        contextId,
        `${traceId}:${cancelled ? 'canceled' : 'failed'}`,
        cancelled ? 'The run was cancelled' : `The agent gave no answer (${e.data.kind}): ${e.data.message}`,
      );
      return {
        ...base,
        status: {
          state: cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED,
          message: reply,
          timestamp: e.data.failedAt,
        },
        artifacts: [],
        history: [question, reply],
      };
    }
  }
  return {
    ...base,
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: s.startedAt },
    artifacts: [],
    history: [question],
  };
};

/** What this process last saw of its own tasks (the SDK's working copies), bounded. */
export type TaskSnapshots = Map<string, { readonly agent: AgentKey; readonly task: Task }>;
const MAX_SNAPSHOTS = 2_000;

const sameAgent = (a: AgentKey, b: AgentKey) => a.projectId === b.projectId && a.agentId === b.agentId;

/** The task as the log has it (any node, after any restart), or undefined when no run of this agent. */
export const taskFromLog = async (ctx: AppContext, agent: AgentKey, taskId: string) => {
  if (!isTraceId(taskId)) return undefined;
  const { events } = await ctx.log.readStream(`agent-run-${taskId}`, 0n);
  return taskOfRun(events, agent);
};

/**
 * The SDK's task store for one agent. A task this process ran is the SDK's working copy (the step
 * it is at, then its end, as its run recorded it); any other is read from the run's stream. The
 * protocol's `tasks/get` reads the log first (src/a2a/handler.ts): memory only for a run under way here.
 */
export const logTaskStore = (
  ctx: AppContext,
  agent: AgentKey,
  live: LiveTasks,
  snapshots: TaskSnapshots,
): TaskStore => ({
  load: async (taskId) => {
    const kept = snapshots.get(taskId);
    if (kept && live.ranHere.has(taskId) && sameAgent(kept.agent, agent)) return structuredClone(kept.task);
    return taskFromLog(ctx, agent, taskId);
  },
  save: async (task) => {
    snapshots.delete(task.id);
    if (snapshots.size >= MAX_SNAPSHOTS) {
      const oldest = snapshots.keys().next().value as string;
      snapshots.delete(oldest);
      live.ranHere.delete(oldest);
    }
    snapshots.set(task.id, { agent, task: structuredClone(task) });
  },
  list: async (_params: ListTasksRequest): Promise<ListTasksResponse> => {
    throw new UnsupportedOperationError(
      "ListTasks is not served: an agent's runs are listed at GET /api/projects/{project}/agents/{agent}/runs",
    );
  },
});
