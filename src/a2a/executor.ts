import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { stepText } from '../engines/agentLoop';
import { loggable } from './handler';
import { A2aAskFailed, type A2aPorts } from './ports';
import {
  AgentEvent,
  TaskState,
  type AgentExecutor,
  type ExecutionEventBus,
  type Message,
  type RequestContext,
} from './sdk';
import type { LiveTasks } from './live';
import { agentMessage, answerArtifact, RUN_META_KEY } from './tasks';

/** The question a message asks: its text parts, in order (files and data are not read). */
const questionOf = (message: Message) =>
  message.parts
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
    .join('\n')
    .trim();

/**
 * Runs one agent for the SDK: each `message/send` or `message/stream` is one run of the agent (its
 * trace id the task's id, its thread the task's context), published as the task, a status update
 * per step, the answer as an artifact, and the final state (completed, failed, canceled).
 * `cancelTask` aborts the run, as MCP's cancellation does; the run then fails `aborted` on its stream.
 */
export const agentExecutor = (
  agent: { readonly project: string; readonly name: string },
  ports: A2aPorts,
  live: LiveTasks,
  logger: Logger,
): AgentExecutor => ({
  execute: async (request: RequestContext, bus: ExecutionEventBus) => {
    const { taskId, contextId } = request;
    const at = () => new Date().toISOString();
    const status = (state: TaskState, text: string | null, final = false) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message:
              text === null
                ? undefined
                : agentMessage(taskId, contextId, final ? `${taskId}:${state}` : crypto.randomUUID(), text),
            timestamp: at(),
          },
          metadata: undefined,
        }),
      );
    const user = request.userMessage;
    live.ranHere.add(taskId);
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: at() },
        artifacts: [],
        history: [user],
        metadata: {
          [RUN_META_KEY]: {
            trace_id: taskId,
            stream: `agent-run-${taskId}`,
            via: 'a2a',
            project: agent.project,
            agent: agent.name,
          },
        },
      }),
    );
    const question = questionOf(user);
    if (question === '') {
      status(
        TaskState.TASK_STATE_REJECTED,
        'The message asks nothing: send the question as a text part',
        true,
      );
      return;
    }
    if (!loggable(question)) {
      status(
        TaskState.TASK_STATE_REJECTED,
        'The question holds NUL or a lone surrogate, which the log does not keep',
        true,
      );
      return;
    }
    const controller = new AbortController();
    live.running.set(taskId, controller);
    try {
      status(TaskState.TASK_STATE_WORKING, null);
      const answer = await ports.ask(
        { project: agent.project, agent: agent.name, question, threadId: contextId, traceId: taskId },
        {
          signal: controller.signal,
          onStep: (step) => {
            const text = stepText(step);
            if (text !== null) status(TaskState.TASK_STATE_WORKING, text);
          },
        },
      );
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: answerArtifact(taskId, answer),
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      status(TaskState.TASK_STATE_COMPLETED, answer.answer, true);
    } catch (error) {
      if (error instanceof A2aAskFailed) {
        if (error.kind === 'aborted') status(TaskState.TASK_STATE_CANCELED, 'The run was cancelled', true);
        else if (!error.started) status(TaskState.TASK_STATE_REJECTED, error.message, true);
        else
          status(
            TaskState.TASK_STATE_FAILED,
            `The agent gave no answer (${error.kind}): ${error.message}`,
            true,
          );
      } else {
        logger.error({ err: error, taskId }, 'A2A task failed');
        status(TaskState.TASK_STATE_FAILED, 'The run failed; see its trace', true);
      }
    } finally {
      live.running.delete(taskId);
    }
  },

  cancelTask: async (taskId: string, bus: ExecutionEventBus) => {
    const controller = live.running.get(taskId);
    if (controller) controller.abort('cancelled over A2A (tasks/cancel)');
    // Not running here (it ended meanwhile): nothing will be published, so the SDK's wait ends now.
    else bus.finished();
  },
});
