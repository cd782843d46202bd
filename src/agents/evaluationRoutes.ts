import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { createResponses, readResponses } from '../http/resourceRoutes';
import type { AgentEvaluationsService } from './evaluation';
import {
  agentEvaluationBody,
  agentEvaluationComparePath,
  agentEvaluationComparison,
  agentEvaluationsPath,
  agentEvaluationsQuery,
  agentEvaluationView,
} from './evaluationSchemas';

/**
 * An agent's evaluations over REST: made (EVALUATE AGENT, its test set and options in a body: the
 * same event), listed newest first, and two of them side by side, case by case (docs/agents.md
 * "Evaluating an agent").
 */
export const agentEvaluationRoutes = (
  api: Api,
  evaluations: Pick<AgentEvaluationsService, 'evaluate' | 'list' | 'compare'>,
) =>
  api
    .add({
      method: 'post',
      path: '/api/projects/:project/agents/:agent/evaluations',
      tag: 'agents',
      summary:
        'Evaluate an agent (EVALUATE AGENT): ask it each question of a test set (test_table or query) and score its answers (scoring exact, contains, numeric with tolerance, sql_result, llm_judge with rubric and llm)',
      params: agentEvaluationsPath,
      body: agentEvaluationBody,
      responses: createResponses(
        agentEvaluationView,
        {
          400: 'Invalid options or test set',
          403: 'The test set is out of the caller’s reach, or an LLM budget refused a call',
          404: 'Unknown project or agent',
          502: 'The agent’s or the judge’s language model failed',
        },
        'The evaluation, recorded',
      ),
      handle: async ({ params, body, signal }) => {
        const { test_table: table, query, ...options } = body.evaluation;
        const source = table !== undefined ? { table } : { query: query! };
        return {
          status: 201,
          body: await evaluations.evaluate(
            params.project,
            params.agent,
            source,
            params.project,
            options,
            signal,
          ),
        };
      },
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent/evaluations',
      tag: 'agents',
      summary:
        'An agent’s evaluations (EVALUATE AGENT), newest first, each with the agent version it ran against',
      params: agentEvaluationsPath,
      query: agentEvaluationsQuery,
      responses: readResponses('Evaluations', z.array(agentEvaluationView), 'Unknown project or agent'),
      handle: async ({ params, query }) => ({
        status: 200,
        body: await evaluations.list(params.project, params.agent, query.limit),
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent/evaluations/:before/compare/:after',
      tag: 'agents',
      summary:
        'Two evaluations of an agent side by side (typically two versions on one test set): each case’s answer, score, pass and run in both, and whether its pass changed',
      params: agentEvaluationComparePath,
      responses: {
        200: { description: 'The comparison', schema: agentEvaluationComparison },
        400: problem('An id is not an evaluation id'),
        404: problem('Unknown project, agent or evaluation of that agent'),
      },
      handle: async ({ params }) => ({
        status: 200,
        body: await evaluations.compare(params.project, params.agent, params.before, params.after),
      }),
    });
