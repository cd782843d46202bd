import { forgetQuery } from '../shared/resourceSchemas';
import { z } from 'zod';
import { etag, ifMatchVersion, type Api } from '../http/api';
import {
  createResponses,
  deleteByCommand,
  deleteResponses,
  putResponses,
  readResponses,
} from '../http/resourceRoutes';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid } from '../shared/errors';
import {
  chatbotFlatView,
  chatbotPath,
  chatbotsPath,
  chatbotView,
  createChatbotBody,
  putChatbotBody,
} from './schemas';
import type { ChatbotsService } from './service';

/** The reads of a project's chatbots, and creating one. */
const chatbotReadRoutes = (api: Api, chatbots: ChatbotsService) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/chatbots',
      tag: 'chatbots',
      summary: 'List chatbots',
      params: chatbotsPath,
      responses: readResponses('Chatbots', z.array(chatbotView), 'Unknown project'),
      handle: async ({ params }) => ({ status: 200, body: await chatbots.list(params.project) }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/chatbots/:chatbot',
      tag: 'chatbots',
      summary: 'Get a chatbot (name is case-sensitive, as MindsDB)',
      params: chatbotPath,
      responses: readResponses('The chatbot', chatbotView, 'Unknown project or chatbot'),
      handle: async ({ params }) => {
        const { view, version } = await chatbots.get(params.project, params.chatbot);
        return { status: 200, body: view, headers: etag(version) };
      },
    });

export const chatbotRoutes = (api: Api, chatbots: ChatbotsService, projects: ProjectDirectory) =>
  chatbotReadRoutes(api, chatbots)
    .add({
      method: 'post',
      path: '/api/projects/:project/chatbots',
      tag: 'chatbots',
      summary:
        'Create a chatbot: an agent (or a model) answering on the built-in channel, and in a chat database when one is named',
      params: chatbotsPath,
      before: projects.guard,
      body: createChatbotBody,
      responses: createResponses(chatbotFlatView, {
        400: 'Missing name, or agent/model',
        404: 'Unknown project, database, agent or model',
        409: 'A chatbot with that name exists',
      }),
      handle: async ({ params, body: { chatbot } }) => {
        if (!chatbot.agent_name && !chatbot.model_name)
          throw invalid(
            'Must include either "model_name" or "agent_name" field for chatbot',
            'Missing field',
          );
        // No database: the chatbot answers on the built-in channel only (POST …/messages).
        const database = (await chatbots.resolveDatabase(chatbot)) ?? null;
        const result = await chatbots.run(params.project, {
          type: 'CreateChatbot',
          data: {
            name: chatbot.name,
            agentRef: chatbot.agent_name ?? null,
            modelName: chatbot.model_name ?? null,
            database,
            // REST's default, as MindsDB (SQL's default is true).
            isRunning: chatbot.is_running ?? false,
            params: chatbot.params ?? {},
          },
        });
        return { status: 201, body: chatbots.flat(result!.row), headers: etag(result!.row.VERSION) };
      },
    })
    .add({
      method: 'put',
      path: '/api/projects/:project/chatbots/:chatbot',
      tag: 'chatbots',
      summary: 'Update a chatbot (params merged, new values winning), or create it',
      params: chatbotPath,
      before: projects.guard,
      body: putChatbotBody,
      responses: putResponses(chatbotFlatView, {
        404: 'Unknown database, agent or model',
        409: 'The new name is taken',
        412: 'Stale If-Match',
      }),
      handle: async ({ params, body: { chatbot }, headers }) => {
        const database = await chatbots.resolveDatabase(chatbot);
        const result = await chatbots.run(params.project, {
          type: 'PutChatbot',
          data: {
            ref: params.chatbot,
            name: chatbot.name,
            agentRef: chatbot.agent_name,
            modelName: chatbot.model_name,
            database,
            isRunning: chatbot.is_running,
            params: chatbot.params,
            expectedVersion: ifMatchVersion(headers),
          },
        });
        return {
          status: result!.created ? 201 : 200,
          body: chatbots.flat(result!.row),
          headers: etag(result!.row.VERSION),
        };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/chatbots/:chatbot',
      tag: 'chatbots',
      summary: 'Delete a chatbot; ?forget=true also forgets its secrets (tokens) for good',
      params: chatbotPath,
      query: forgetQuery,
      responses: deleteResponses('Unknown project or chatbot', 'Stale If-Match'),
      handle: deleteByCommand('chatbot', (project, target, options) =>
        chatbots.run(project, { type: 'DeleteChatbot', data: target }, options),
      ),
    });
