import { z } from 'zod';
import packageJson from '../../package.json';
import type { Api } from '../http/api';

export const VERSION: string = packageJson.version;

export const systemRoutes = (api: Api) =>
  api
    .add({
      method: 'get',
      path: '/api/util/ping',
      tag: 'util',
      summary: 'Liveness',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: async () => ({ status: 200, body: { status: 'ok' } }),
    })
    .add({
      method: 'get',
      path: '/api/status',
      tag: 'util',
      summary: 'Version and auth status, as MindsDB reports them',
      responses: {
        200: {
          description: 'Status',
          schema: z.object({
            mindsdb_version: z.string(),
            environment: z.string(),
            auth: z.object({ http_auth_enabled: z.boolean(), confirmed: z.boolean(), provider: z.string() }),
          }),
        },
      },
      handle: async () => ({
        status: 200,
        body: {
          mindsdb_version: VERSION,
          environment: 'local',
          auth: { http_auth_enabled: false, confirmed: true, provider: 'disabled' },
        },
      }),
    });
