import crypto from 'node:crypto';
import type { Response } from 'express';
import {
  Role,
  TaskState,
  toJsonRpcError,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
} from './sdk';
import { nameParts } from '../shared/names';
import { callContext, type AgentStack } from './stacks';
import { isTerminal, textPart } from './tasks';

/**
 * MindsDB's A2A methods (its server predates A2A 1.0: `tasks/send`, `tasks/sendSubscribe`,
 * `tasks/get`, `tasks/cancel`), answered by the agent's own request handler (the same runs, records
 * and checks as `message/send` at the agent's URL), in the shape those clients read: a task with
 * `sessionId` (its context), parts `{type: "text", text}`, artifacts with an `index`. Each object
 * also carries the v0.3 names (`kind`, `contextId`, `artifactId`), so a v0.3 client reads it too.
 * Loaded with the SDK, by the first request to `POST /a2a/`.
 */

type Json = Record<string, unknown>;

/** Pre-1.0 state names (no `rejected` then: a refused question is `failed`). */
const STATE: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_REJECTED]: 'failed',
};
const stateName = (state: TaskState | undefined) =>
  state === undefined ? 'unknown' : (STATE[state] ?? 'unknown');

const partJson = (part: Part): Json => {
  const c = part.content;
  if (c?.$case === 'text') return { type: 'text', kind: 'text', text: c.value };
  if (c?.$case === 'data') return { type: 'data', kind: 'data', data: c.value };
  return { type: 'text', kind: 'text', text: '' };
};

const messageJson = (m: Message | undefined): Json | null =>
  m
    ? {
        role: m.role === Role.ROLE_AGENT ? 'agent' : 'user',
        parts: m.parts.map(partJson),
        kind: 'message',
        messageId: m.messageId,
        ...(m.contextId ? { contextId: m.contextId } : {}),
        ...(m.taskId ? { taskId: m.taskId } : {}),
      }
    : null;

const statusJson = (status: Task['status']) => ({
  state: stateName(status?.state),
  message: messageJson(status?.message),
  timestamp: status?.timestamp ?? new Date().toISOString(),
});

const artifactJson = (a: Artifact, index: number): Json => ({
  name: a.name,
  description: a.description,
  parts: a.parts.map(partJson),
  index,
  artifactId: a.artifactId,
});

/** A task as MindsDB's clients read it (and v0.3's). */
export const taskJson = (task: Task): Json => ({
  id: task.id,
  sessionId: task.contextId,
  contextId: task.contextId,
  kind: 'task',
  status: statusJson(task.status),
  artifacts: task.artifacts.map(artifactJson),
  history: task.history.map(messageJson),
  metadata: task.metadata ?? {},
});

/** The question of a pre-1.0 (or v0.3) message: its text parts, as the protocol's Message. */
const userMessage = (params: Json): Message => {
  const message = (params.message ?? {}) as Json;
  const parts = Array.isArray(message.parts) ? (message.parts as Json[]) : [];
  const texts = parts.flatMap((p) =>
    (p?.type === 'text' || p?.kind === 'text') && typeof p.text === 'string' ? [p.text] : [],
  );
  const contextId =
    typeof params.sessionId === 'string'
      ? params.sessionId
      : typeof message.contextId === 'string'
        ? message.contextId
        : '';
  return {
    messageId: typeof message.messageId === 'string' ? message.messageId : crypto.randomUUID(),
    contextId,
    taskId: typeof message.taskId === 'string' ? message.taskId : '',
    role: Role.ROLE_USER,
    parts: texts.map(textPart),
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
};

const historyLength = (params: Json) =>
  typeof params.historyLength === 'number' &&
  Number.isInteger(params.historyLength) &&
  params.historyLength >= 0
    ? params.historyLength
    : undefined;

const rpcResult = (id: unknown, result: unknown) => ({ jsonrpc: '2.0', id: id ?? null, result });
export const rpcFailure = (id: unknown, code: number, message: string) => ({
  jsonrpc: '2.0',
  id: id ?? null,
  error: { code, message },
});
const failureOf = (id: unknown, error: unknown) => {
  const { code, message } = toJsonRpcError(error);
  return rpcFailure(id, code, message);
};

/** MindsDB's method names, and what each is at an agent. */
export const MINDSDB_METHODS = ['tasks/send', 'tasks/sendSubscribe', 'tasks/get', 'tasks/cancel'] as const;
export type MindsdbMethod = (typeof MINDSDB_METHODS)[number];

/**
 * Answers one of MindsDB's methods with the agent's handler. `tasks/send` waits for the run's end;
 * `tasks/sendSubscribe` streams (SSE) a status event per step, the answer as an artifact event, and
 * the final status (`final: true`). `onTask` is told the task's id as soon as it is known.
 */
export const answerMindsdb = async (
  agent: AgentStack,
  method: MindsdbMethod,
  body: { id?: unknown; params: Json },
  res: Response,
  onTask: (taskId: string) => void,
) => {
  const { params } = body;
  const context = await callContext();
  try {
    switch (method) {
      case 'tasks/send': {
        const answer = await agent.handler.sendMessage(
          {
            tenant: '',
            message: userMessage(params),
            configuration: {
              acceptedOutputModes: [],
              taskPushNotificationConfig: undefined,
              historyLength: historyLength(params),
              returnImmediately: false,
            },
            metadata: undefined,
          },
          context,
        );
        if (!('status' in answer)) return res.json(rpcFailure(body.id, -32603, 'The agent answered no task'));
        onTask(answer.id);
        return res.json(rpcResult(body.id, taskJson(answer)));
      }
      case 'tasks/get':
      case 'tasks/cancel': {
        const id = typeof params.id === 'string' ? params.id : '';
        const task =
          method === 'tasks/get'
            ? await agent.handler.getTask({ tenant: '', id, historyLength: historyLength(params) }, context)
            : await agent.handler.cancelTask({ tenant: '', id, metadata: undefined }, context);
        return res.json(rpcResult(body.id, taskJson(task)));
      }
      case 'tasks/sendSubscribe':
        return await stream(agent, body, res, context, onTask);
      default: {
        const _exhaustive: never = method;
        return _exhaustive;
      }
    }
  } catch (error) {
    if (res.headersSent) return res.end();
    return res.json(failureOf(body.id, error));
  }
};

const stream = async (
  agent: AgentStack,
  body: { id?: unknown; params: Json },
  res: Response,
  context: Awaited<ReturnType<typeof callContext>>,
  onTask: (taskId: string) => void,
) => {
  const events = agent.handler.sendMessageStream(
    {
      tenant: '',
      message: userMessage(body.params),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        historyLength: historyLength(body.params),
        returnImmediately: false,
      },
      metadata: undefined,
    },
    context,
  );
  const send = (result: unknown) => res.write(`data: ${JSON.stringify(rpcResult(body.id, result))}\n\n`);
  let started = false;
  try {
    for await (const event of events as AsyncIterable<StreamResponse>) {
      if (!started) {
        res.status(200);
        res.setHeader('Content-Type', 'text/event-stream');
        res.setHeader('Cache-Control', 'no-cache');
        res.setHeader('Connection', 'keep-alive');
        res.flushHeaders();
        started = true;
      }
      const p = event.payload;
      if (p?.$case === 'task') {
        onTask(p.value.id);
        send({
          id: p.value.id,
          taskId: p.value.id,
          contextId: p.value.contextId,
          kind: 'status-update',
          status: statusJson(p.value.status),
          final: isTerminal(p.value),
          metadata: p.value.metadata ?? {},
        });
      } else if (p?.$case === 'statusUpdate') {
        const final = isTerminal({ status: p.value.status } as Task);
        send({
          id: p.value.taskId,
          taskId: p.value.taskId,
          contextId: p.value.contextId,
          kind: 'status-update',
          status: statusJson(p.value.status),
          final,
          metadata: p.value.metadata ?? {},
        });
      } else if (p?.$case === 'artifactUpdate') {
        send({
          id: p.value.taskId,
          taskId: p.value.taskId,
          contextId: p.value.contextId,
          kind: 'artifact-update',
          artifact: artifactJson(p.value.artifact!, 0),
          lastChunk: p.value.lastChunk,
          append: p.value.append,
        });
      } else if (p?.$case === 'message') {
        send(messageJson(p.value));
      }
    }
  } catch (error) {
    if (!started) return res.json(failureOf(body.id, error));
    res.write(`data: ${JSON.stringify(failureOf(body.id, error))}\n\n`);
  }
  return res.end();
};

/** The methods that send a message: their agent is named in `params.message.metadata.agentName`. */
const SENDS = new Set([
  'tasks/send',
  'tasks/sendSubscribe',
  'message/send',
  'message/stream',
  'SendMessage',
  'SendStreamingMessage',
]);
const TRACE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `agent` (in project mindsdb) or `project.agent`, read as SQL writes a name (quotes allowed). */
const agentRef = (text: string) => {
  const parts = nameParts(text.trim());
  return parts.length === 2
    ? { project: parts[0]!, agent: parts[1]! }
    : { project: 'mindsdb', agent: text.trim() };
};

/**
 * The agent a request to `POST /a2a/` is for: named by `agentName` in the message's metadata (or the
 * request's), else, for a task's methods, the agent whose run the task is (read from the log; a
 * pre-1.0 client's own task id is known in the process that answered its `tasks/send`). `taskId`: the
 * task meant, as this server names it.
 */
export const agentOfRequest = async (
  readRun: (traceId: string) => Promise<{ project: string; agent: string } | undefined>,
  method: string,
  params: Json,
  clientIds: ReadonlyMap<string, string>,
): Promise<{ project: string; agent: string; taskId?: string } | { code: number; message: string }> => {
  const message = (params.message ?? {}) as Json;
  const named = ((message.metadata ?? {}) as Json).agentName ?? ((params.metadata ?? {}) as Json).agentName;
  if (typeof named === 'string' && named.trim() !== '' && named.length <= 600) return agentRef(named);
  if (SENDS.has(method))
    return {
      code: -32602,
      message:
        'Name the agent in params.message.metadata.agentName: "my_agent" (project mindsdb) or "project.my_agent"',
    };
  const id = typeof params.id === 'string' ? params.id : '';
  const taskId = TRACE_ID.test(id) ? id : clientIds.get(id);
  const run = taskId ? await readRun(taskId) : undefined;
  if (!run || !taskId) return { code: -32001, message: 'Task not found' };
  return { ...run, taskId };
};
