import { z } from 'zod';
import { etag, ifMatchVersion, problem, type Api } from '../http/api';
import { presentedOnce } from '../http/keptJson';
import { createResponses, deleteResponses, readResponses } from '../http/resourceRoutes';
import { createProjectBody, projectParams, projectView } from './schemas';
import type { ProjectsService } from './service';

const withoutVersion = <T extends { version: bigint }>({ version: _v, ...rest }: T) => rest;

export const projectRoutes = (api: Api, projects: ProjectsService) =>
  api
    .add({
      method: 'get',
      path: '/api/projects',
      tag: 'projects',
      summary: 'List projects',
      responses: { 200: { description: 'All projects', schema: z.array(projectView) } },
      handle: async () => ({ status: 200, body: presentedOnce(await projects.list(), withoutVersion) }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project',
      tag: 'projects',
      summary: 'Get a project (name is case-insensitive)',
      params: projectParams,
      responses: readResponses('The project', projectView, 'No such project'),
      handle: async ({ params }) => {
        const project = await projects.require(params.project);
        return { status: 200, body: withoutVersion(project), headers: etag(project.version) };
      },
    })
    .add({
      method: 'post',
      path: '/api/projects',
      tag: 'projects',
      summary: 'Create a project (beyond MindsDB, which only has SQL for this)',
      body: createProjectBody,
      responses: createResponses(projectView, { 409: 'A project or database with that name exists' }),
      handle: async ({ body }) => {
        const project = await projects.create(body.name);
        return {
          status: 201,
          body: withoutVersion(project),
          headers: { ...etag(project.version), Location: `/api/projects/${project.name}` },
        };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project',
      tag: 'projects',
      summary: 'Delete a project and everything in it',
      params: projectParams,
      responses: {
        ...deleteResponses('No such project', 'If-Match does not match the current version'),
        400: problem('The default project cannot be deleted'),
      },
      handle: async ({ params, headers }) => {
        await projects.remove(params.project, ifMatchVersion(headers));
        return { status: 204 };
      },
    });
