import { forgetQuery } from '../shared/resourceSchemas';
import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { createResponses, deleteResponses, readResponses } from '../http/resourceRoutes';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid } from '../shared/errors';
import { quoteMysqlIdent } from '../shared/quoting';
import {
  completionsBody,
  completionsView,
  createKnowledgeBaseBody,
  insertKnowledgeBaseBody,
  knowledgeBaseDefinition,
  knowledgeBasePath,
  knowledgeBasesPath,
  knowledgeBaseView,
} from './schemas';
import type { KnowledgeBasesService } from './service';

/** A project's knowledge bases: listing, reading and creating. */
const knowledgeBaseReadRoutes = (api: Api, kbs: KnowledgeBasesService, projects: ProjectDirectory) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/knowledge_bases',
      tag: 'knowledge bases',
      summary: 'List knowledge bases',
      params: knowledgeBasesPath,
      responses: readResponses('Knowledge bases', z.array(knowledgeBaseView), 'Unknown project'),
      handle: async ({ params }) => ({ status: 200, body: await kbs.list(params.project) }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/knowledge_bases/:knowledge_base',
      tag: 'knowledge bases',
      summary: 'Get a knowledge base by name (case-insensitive), with its document and chunk counts',
      params: knowledgeBasePath,
      responses: readResponses('The knowledge base', knowledgeBaseView, 'Unknown project or knowledge base'),
      handle: async ({ params }) => ({
        status: 200,
        body: await kbs.get(params.project, params.knowledge_base),
      }),
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/knowledge_bases',
      tag: 'knowledge bases',
      summary:
        'Create a knowledge base (embedding_model, content_columns, metadata_columns, id_column, params: chunk_size, chunk_overlap, hybrid_search_alpha)',
      params: knowledgeBasesPath,
      before: projects.guard,
      body: createKnowledgeBaseBody,
      responses: createResponses(knowledgeBaseView, {
        400: 'Invalid or unsupported definition',
        404: 'Unknown project',
        409: 'A knowledge base with that name exists',
      }),
      handle: async ({ params, body: { knowledge_base } }) => {
        const { name, ...rest } = knowledge_base;
        const created = await kbs.create(params.project, {
          ...knowledgeBaseDefinition(name, rest),
          ifNotExists: false,
        });
        return { status: 201, body: created };
      },
    });

/** MindsDB's knowledge base routes, on the projects namespace. */
export const knowledgeBaseRoutes = (api: Api, kbs: KnowledgeBasesService, projects: ProjectDirectory) =>
  knowledgeBaseReadRoutes(api, kbs, projects)
    .add({
      method: 'put',
      path: '/api/projects/:project/knowledge_bases/:knowledge_base',
      tag: 'knowledge bases',
      summary:
        'Insert documents: rows, the rows of a query (run in the project), or uploaded files; an id inserted again replaces its chunks',
      params: knowledgeBasePath,
      before: projects.guard,
      body: insertKnowledgeBaseBody,
      responses: {
        200: {
          description: 'Inserted',
          schema: z.object({ inserted_documents: z.number(), inserted_chunks: z.number() }),
        },
        400: problem('Nothing to insert, rows without content, or web pages (not reachable from here)'),
        404: problem('Unknown project, knowledge base or file'),
        502: problem('The embedding provider failed'),
      },
      handle: async ({ params, body: { knowledge_base: b }, signal }) => {
        if (b.urls !== undefined)
          throw invalid(
            'urls: this service does not crawl web pages; upload their text as files or rows',
            'Unsupported knowledge base source',
          );
        const sources = [b.rows, b.query, b.files].filter((x) => x !== undefined).length;
        if (sources !== 1) throw invalid('Give exactly one of rows, query or files', 'Nothing to insert');
        const project = params.project;
        const kb = params.knowledge_base;
        const done = b.rows
          ? await kbs.insert(project, kb, b.rows, signal)
          : b.query
            ? await kbs.insertQuery(project, kb, project, { sql: b.query }, signal)
            : await (async () => {
                let total = { documents: 0, chunks: 0 };
                for (const file of b.files!) {
                  const one = await kbs.insertQuery(
                    project,
                    kb,
                    project,
                    { sql: `SELECT * FROM files.${quoteMysqlIdent(file)}` },
                    signal,
                  );
                  total = { documents: total.documents + one.documents, chunks: total.chunks + one.chunks };
                }
                return total;
              })();
        return { status: 200, body: { inserted_documents: done.documents, inserted_chunks: done.chunks } };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/knowledge_bases/:knowledge_base',
      tag: 'knowledge bases',
      summary:
        'Delete a knowledge base and everything it holds; ?forget=true also forgets its secrets (the embedding API key) for good',
      params: knowledgeBasePath,
      query: forgetQuery,
      responses: deleteResponses('Unknown project or knowledge base'),
      handle: async ({ params, query }) => {
        await kbs.remove(params.project, params.knowledge_base, false, { forget: query.forget });
        return { status: 204 };
      },
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/knowledge_bases/:knowledge_base/completions',
      tag: 'knowledge bases',
      summary:
        'Search (type context: the closest passages) or answer from them (type chat: a language model, citing chunk ids)',
      params: knowledgeBasePath,
      body: completionsBody,
      responses: {
        200: { description: 'Passages, or an answer with its passages', schema: completionsView },
        404: problem('Unknown project or knowledge base'),
        502: problem('The embedding provider or language model failed'),
      },
      handle: async ({ params, body, signal }) => ({
        status: 200,
        body: await kbs.completions(params.project, params.knowledge_base, body, signal),
      }),
    });
