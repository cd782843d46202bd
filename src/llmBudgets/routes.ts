import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { presentLlmBudget } from './present';
import { limitsOf, llmBudgetLimits, llmBudgetParams, llmBudgetSchema } from './schemas';
import type { LlmBudgetsService } from './service';

/**
 * LLM budgets over REST: listed, set (PUT: the budget of a user, a token or a project, replaced
 * whole) and removed. Setting and removing take the admin role (src/users/roles.ts).
 */
export const llmBudgetRoutes = (api: Api, budgets: LlmBudgetsService) =>
  api
    .add({
      method: 'get',
      path: '/api/llm/budgets',
      tag: 'llm_budgets',
      summary: 'List the LLM budgets, with the calls and tokens spent under each today (UTC)',
      responses: { 200: { description: 'The budgets', schema: z.array(llmBudgetSchema) } },
      handle: async () => ({
        status: 200,
        body: (await budgets.list()).map((b) => presentLlmBudget(b, b)),
      }),
    })
    .add({
      method: 'put',
      path: '/api/llm/budgets/:scope/:subject',
      tag: 'llm_budgets',
      summary: 'Set the LLM budget of a user, an access token (by id) or a project (admin)',
      params: llmBudgetParams,
      body: llmBudgetLimits,
      responses: {
        200: { description: 'The budget as it stands', schema: llmBudgetSchema },
        400: problem('A limit that is not a whole number from 0, or no limit at all'),
        403: problem('Not an admin'),
      },
      handle: async ({ params, body }) => {
        const set = await budgets.set(params.scope, params.subject, limitsOf(body));
        return { status: 200, body: presentLlmBudget(set, set) };
      },
    })
    .add({
      method: 'delete',
      path: '/api/llm/budgets/:scope/:subject',
      tag: 'llm_budgets',
      summary: 'Remove the LLM budget of a user, an access token or a project (admin)',
      params: llmBudgetParams,
      responses: { 204: { description: 'Removed' }, 404: problem('No such budget') },
      handle: async ({ params }) => {
        await budgets.drop(params.scope, params.subject, false);
        return { status: 204 };
      },
    });
