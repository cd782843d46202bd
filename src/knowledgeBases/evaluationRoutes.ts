import { z } from 'zod';
import { type Api } from '../http/api';
import { createResponses, readResponses } from '../http/resourceRoutes';
import { evaluationBody, evaluationPath, evaluationsQuery, evaluationView } from './evaluationSchemas';
import type { KnowledgeBasesService } from './service';

/**
 * `EVALUATE KNOWLEDGE_BASE` over REST (beyond MindsDB, which has it in SQL only): the same options
 * in a body, the same event; and the evaluations recorded, newest first.
 */
export const knowledgeBaseEvaluationRoutes = (
  api: Api,
  kbs: Pick<KnowledgeBasesService, 'evaluate' | 'evaluations' | 'get'>,
) =>
  api
    .add({
      method: 'post',
      path: '/api/projects/:project/knowledge_bases/:knowledge_base/evaluations',
      tag: 'knowledge bases',
      summary:
        'Evaluate retrieval (EVALUATE KNOWLEDGE_BASE): questions with known documents (version doc_id) or chunks scored by a judge language model (llm_relevancy); test_table, version, generate_data, evaluate, llm, save_to, top_k, hybrid_search_alpha',
      params: evaluationPath,
      before: async ({ params }) => {
        await kbs.get(params.project, params.knowledge_base);
      },
      body: evaluationBody,
      responses: createResponses(
        evaluationView,
        {
          400: 'Invalid options, test table or generated questions',
          403: 'The test table is out of the caller’s reach',
          404: 'Unknown project or knowledge base',
          413: 'The judge would make more LLM calls than LLM_SQL_MAX_CALLS',
          502: 'The embedding provider or language model failed',
        },
        'The evaluation, recorded',
      ),
      handle: async ({ params, body, signal }) => ({
        status: 201,
        body: await kbs.evaluate(params.project, params.knowledge_base, body.evaluation, signal),
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/knowledge_bases/:knowledge_base/evaluations',
      tag: 'knowledge bases',
      summary: 'A knowledge base’s evaluations, newest first, with the settings each ran with',
      params: evaluationPath,
      query: evaluationsQuery,
      responses: readResponses('Evaluations', z.array(evaluationView), 'Unknown project or knowledge base'),
      handle: async ({ params, query }) => ({
        status: 200,
        body: await kbs.evaluations(params.project, params.knowledge_base, query.limit),
      }),
    });
