import { z } from 'zod';
import { problem, type Api } from '../http/api';
import type { AgentEvaluationsService } from './evaluation';
import {
  agentEvaluationComparePath,
  agentEvaluationComparison,
  agentEvaluationsPath,
  agentEvaluationsQuery,
  agentEvaluationView,
} from './evaluationSchemas';

/**
 * An agent's evaluations (EVALUATE AGENT, in SQL) over REST: listed newest first, and two of them
 * side by side, case by case (docs/agents.md "Evaluating an agent").
 */
export const agentEvaluationRoutes = (
  api: Api,
  evaluations: Pick<AgentEvaluationsService, 'list' | 'compare'>,
) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent/evaluations',
      tag: 'agents',
      summary:
        'An agent’s evaluations (EVALUATE AGENT), newest first, each with the agent version it ran against',
      params: agentEvaluationsPath,
      query: agentEvaluationsQuery,
      responses: {
        200: { description: 'Evaluations', schema: z.array(agentEvaluationView) },
        404: problem('Unknown project or agent'),
      },
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
