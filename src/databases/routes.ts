import { forgetQuery } from '../shared/resourceSchemas';
import { z } from 'zod';
import { etag, ifMatchVersion, problem, type Api } from '../http/api';
import { deleteResponses, readResponses } from '../http/resourceRoutes';
import { resourceName } from '../shared/names';
import { createDatabaseBody, databaseParams, databaseView, updateDatabaseBody } from './schemas';
import type { DatabasesService } from './service';

const created = z.object({
  name: z.string(),
  engine: z.string(),
  type: z.literal('data'),
  id: z.number().int(),
});

/** Listing and reading databases. */
const databaseReadRoutes = (api: Api, databases: DatabasesService) =>
  api
    .add({
      method: 'get',
      path: '/api/databases',
      tag: 'databases',
      summary: 'List databases: system, projects and integrations',
      responses: { 200: { description: 'All databases', schema: z.array(databaseView) } },
      handle: async () => ({ status: 200, body: await databases.list() }),
    })
    .add({
      method: 'post',
      path: '/api/databases/status',
      tag: 'databases',
      summary: 'Check connection parameters without saving them',
      body: z.union([
        z.object({
          database: z.object({
            engine: z.string().min(1),
            parameters: z.record(z.string(), z.unknown()).optional(),
          }),
        }),
        z.object({ engine: z.string().min(1), parameters: z.record(z.string(), z.unknown()).optional() }),
      ]),
      responses: {
        200: {
          description: 'success, or connection_error with the driver message',
          schema: z.object({
            status: z.enum(['success', 'connection_error']),
            detail: z.string().optional(),
          }),
        },
      },
      handle: async ({ body }) => {
        const spec = 'database' in body ? body.database : body;
        return { status: 200, body: await databases.checkStatus(spec.engine, spec.parameters) };
      },
    })
    .add({
      method: 'get',
      path: '/api/databases/:database',
      tag: 'databases',
      summary: 'Get a database',
      params: databaseParams,
      responses: readResponses('The database', databaseView, 'No such database'),
      handle: async ({ params }) => {
        const { view, version } = await databases.get(params.database);
        return { status: 200, body: view, headers: version === null ? {} : etag(version) };
      },
    });

export const databaseRoutes = (api: Api, databases: DatabasesService) =>
  databaseReadRoutes(api, databases)
    .add({
      method: 'post',
      path: '/api/databases',
      tag: 'databases',
      summary: 'Register an integration (engine postgres, mysql or mariadb)',
      body: createDatabaseBody,
      responses: {
        201: { description: 'Registered', schema: created },
        409: problem('A database or project with that name exists'),
      },
      handle: async ({ body }) => {
        const view = await databases.create(body.database);
        return {
          status: 201,
          body: { name: view.name, engine: view.engine, type: 'data', id: view.id },
          headers: etag(view.version),
        };
      },
    })
    .add({
      method: 'put',
      path: '/api/databases/:database',
      tag: 'databases',
      summary: 'Update an integration, or create it if missing; "******" keeps a stored secret',
      params: z.object({ database: resourceName('Database') }),
      body: updateDatabaseBody,
      responses: {
        200: { description: 'Updated', schema: databaseView },
        201: { description: 'Created', schema: created },
        412: problem('If-Match does not match the current version'),
      },
      handle: async ({ params, body, headers }) => {
        const { created: wasCreated, view } = await databases.upsert(
          params.database,
          body.database,
          ifMatchVersion(headers),
        );
        const { version, ...rest } = view;
        return wasCreated
          ? {
              status: 201,
              body: { name: rest.name, engine: rest.engine, type: 'data', id: rest.id },
              headers: etag(version),
            }
          : { status: 200, body: rest, headers: etag(version) };
      },
    })
    .add({
      method: 'delete',
      path: '/api/databases/:database',
      tag: 'databases',
      summary:
        'Delete an integration (or a project); system databases cannot be deleted. ?forget=true also forgets its secrets for good (crypto-shredding)',
      params: databaseParams,
      query: forgetQuery,
      responses: {
        ...deleteResponses('No such database', 'If-Match does not match the current version'),
        400: problem('System database'),
      },
      handle: async ({ params, headers, query }) => {
        await databases.remove(params.database, ifMatchVersion(headers), { forget: query.forget });
        return { status: 204 };
      },
    });
