import { AgentRunProblem, type AgentRunsService } from '../agentRuns/service';
import { agentEvaluation, type AgentEvaluationPorts } from '../agents/evaluation';
import type { AppContext } from '../context';
import { summarizeLlmSettings } from '../engines/llm';
import type { KnowledgeBaseModelPorts } from '../knowledgeBases/embedding';
import type { AskJudge } from '../knowledgeBases/evaluationJudge';
import { llmOfOption } from '../knowledgeBases/retrieval';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, isDomainError } from '../shared/errors';
import type { SqlService } from '../sql/service';
import { callerRows } from './callerRows';

/**
 * `EVALUATE AGENT`'s ports: each case asked as SQL asks an agent (a recorded run, `via`
 * 'evaluation'), the test set and the SQL compared read as the caller's own SELECT, and the
 * `llm_judge` asked through the same judge as the knowledge bases' (the LLM calls' path: each call
 * recorded, priced and held to the caller's budget).
 */
export const agentEvaluationsService = (
  ctx: AppContext,
  projects: ProjectDirectory,
  deps: {
    readonly agentRuns: Pick<AgentRunsService, 'complete'>;
    readonly sql: () => Pick<SqlService, 'execute'>;
    readonly judge: AskJudge;
    readonly models: KnowledgeBaseModelPorts;
  },
) => {
  const ports: AgentEvaluationPorts = {
    ask: async (project, agent, question, signal) => {
      try {
        const done = await deps.agentRuns.complete(
          { project, agent, messages: [{ question }], via: 'evaluation' },
          { signal, waitForRecord: true },
        );
        return { traceId: done.traceId, answer: done.answer, sql: done.sql, error: null };
      } catch (error) {
        if (!isDomainError(error) || signal?.aborted) throw error;
        const traceId = error instanceof AgentRunProblem ? error.traceId : null;
        return { traceId, answer: '', sql: [], error: error.detail };
      }
    },
    callerRows: callerRows(deps.sql),
    judge: async (llm) => {
      const { settings } = await llmOfOption(deps.models, llm, (message) =>
        invalid(`llm: ${message}`, 'Invalid evaluation'),
      );
      const summary = summarizeLlmSettings(settings);
      return {
        summary: { provider: summary.provider, model: summary.model, baseUrl: summary.baseUrl ?? null },
        ask: ({ prompts, project, what }, signal) => deps.judge({ settings, prompts, project, what }, signal),
      };
    },
  };
  return agentEvaluation(ctx, projects, ports);
};
