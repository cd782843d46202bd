import {
  RequestMalformedError,
  UnsupportedOperationError,
  type A2ARequestHandler,
  type Message,
  type Task,
} from './sdk';
import { isTerminal } from './tasks';

/** Longest id (message, context, task) taken: a context id names a thread on the log. */
const MAX_ID = 256;

/** Text the log keeps as it is: well-formed UTF-16 (no lone surrogate), no NUL. */
export const loggable = (text: string) => text.isWellFormed() && !text.includes('\u0000');

const checkId = (what: string, id: string) => {
  if (id.length > MAX_ID) throw new RequestMalformedError(`${what} is longer than ${MAX_ID} characters`);
  if (!loggable(id)) throw new RequestMalformedError(`${what} holds NUL or a lone surrogate`);
};

/**
 * A message that starts a task: its ids within bounds, and no task named (a task is one run of the
 * agent, which ends answered or failed; a conversation goes on in its context: the same
 * `contextId`, a new message).
 */
const checkMessage = (message: Message | undefined) => {
  if (!message) return;
  checkId('message.messageId', message.messageId ?? '');
  checkId('message.contextId', message.contextId ?? '');
  if (message.taskId)
    throw new UnsupportedOperationError(
      'A task is one run of the agent and takes no further messages: continue the conversation with a new message in the same contextId',
    );
};

/**
 * The SDK's request handler, with what this server refuses first: messages naming a task, ids
 * the log could not keep, and listing tasks (an agent's runs are listed over REST).
 */
export const checkedHandler = (
  inner: A2ARequestHandler,
  /** The task as the log has it; `runningHere`: its run is under way in this process. */
  logged: (taskId: string) => Promise<Task | undefined>,
  runningHere: (taskId: string) => boolean,
): A2ARequestHandler => ({
  getAgentCard: () => inner.getAgentCard(),
  getAuthenticatedExtendedAgentCard: (params, context) =>
    inner.getAuthenticatedExtendedAgentCard(params, context),
  sendMessage: async (params, context) => {
    checkMessage(params.message);
    return inner.sendMessage(params, context);
  },
  sendMessageStream: async function* (params, context) {
    checkMessage(params.message);
    yield* inner.sendMessageStream(params, context);
  },
  // From the log (any node, after a restart); the SDK's working copy only for a run under way here.
  getTask: async (params, context) => {
    const task = await logged(params.id);
    if (!task || (!isTerminal(task) && runningHere(params.id))) return inner.getTask(params, context);
    const n = params.historyLength;
    return n === undefined ? task : { ...task, history: n === 0 ? [] : task.history.slice(-n) };
  },
  cancelTask: (params, context) => inner.cancelTask(params, context),
  createTaskPushNotificationConfig: (params, context) =>
    inner.createTaskPushNotificationConfig(params, context),
  getTaskPushNotificationConfig: (params, context) => inner.getTaskPushNotificationConfig(params, context),
  listTaskPushNotificationConfigs: (params, context) =>
    inner.listTaskPushNotificationConfigs(params, context),
  deleteTaskPushNotificationConfig: (params, context) =>
    inner.deleteTaskPushNotificationConfig(params, context),
  resubscribe: (params, context) => inner.resubscribe(params, context),
  listTasks: async () => {
    throw new UnsupportedOperationError(
      "ListTasks is not served: an agent's runs are listed at GET /api/projects/{project}/agents/{agent}/runs",
    );
  },
});
