import { z } from 'zod';
import { type Api } from '../http/api';
import { createResponses, deleteResponses, putResponses, readResponses } from '../http/resourceRoutes';
import { createViewBody, putViewBody, viewPath, viewsPath, viewView } from './schemas';
import type { ViewsService } from './service';

export const viewRoutes = (api: Api, views: ViewsService) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/views',
      tag: 'views',
      summary: 'List the views of a project',
      params: viewsPath,
      responses: readResponses('Views', z.array(viewView), 'Unknown project'),
      handle: async ({ params }) => ({ status: 200, body: await views.list(params.project) }),
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/views',
      tag: 'views',
      summary: 'Create a view: a named SELECT, read as a table of the project',
      params: viewsPath,
      body: createViewBody,
      responses: createResponses(viewView, {
        400: 'A query that is not a SELECT of known tables, or a name a project table has',
        404: 'Unknown project',
        409: 'A view with that name exists',
      }),
      handle: async ({ params, body: { view } }) => ({
        status: 201,
        body: (await views.create(params.project, { name: view.name, query: view.query })).view,
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/views/:view',
      tag: 'views',
      summary: 'Get a view by name',
      params: viewPath,
      responses: readResponses('The view', viewView, 'Unknown project or view'),
      handle: async ({ params }) => ({ status: 200, body: await views.get(params.project, params.view) }),
    })
    .add({
      method: 'put',
      path: '/api/projects/:project/views/:view',
      tag: 'views',
      summary: 'Create or replace a view (201 when new, 200 when replaced)',
      params: viewPath,
      body: putViewBody,
      responses: putResponses(
        viewView,
        { 400: 'A query that is not a SELECT of known tables', 404: 'Unknown project' },
        'Replaced',
      ),
      handle: async ({ params, body: { view } }) => {
        const made = await views.create(params.project, {
          name: params.view,
          query: view.query,
          replace: true,
        });
        return { status: made.created ? 201 : 200, body: made.view };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/views/:view',
      tag: 'views',
      summary: 'Delete a view',
      params: viewPath,
      responses: deleteResponses('Unknown project or view'),
      handle: async ({ params }) => {
        await views.remove(params.project, params.view);
        return { status: 204 };
      },
    });
