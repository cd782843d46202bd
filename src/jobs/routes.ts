import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { deleteResponses, readResponses } from '../http/resourceRoutes';
import { forgetQuery } from '../shared/resourceSchemas';
import { parseScheduleStr } from './schedule';
import { createJobBody, jobPath, jobRunView, jobsPath, jobView } from './schemas';
import type { JobsService } from './service';

export const jobRoutes = (api: Api, jobs: JobsService) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/jobs',
      tag: 'jobs',
      summary: 'List the jobs of a project',
      params: jobsPath,
      responses: readResponses('Jobs', z.array(jobView), 'Unknown project'),
      handle: async ({ params }) => ({ status: 200, body: await jobs.list(params.project) }),
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/jobs',
      tag: 'jobs',
      summary: 'Create a job: statements run on a schedule (once without schedule_str)',
      params: jobsPath,
      body: createJobBody,
      responses: {
        200: { description: 'Created (MindsDB answers 200)', schema: jobView },
        400: problem('Bad schedule or date'),
        404: problem('Unknown project'),
        409: problem('A job with that name exists'),
      },
      handle: async ({ params, body: { job } }) => ({
        status: 200,
        body: await jobs.create(params.project, {
          name: job.name,
          query: job.query,
          ifQuery: job.if_query ?? null,
          startAt: job.start_at ?? null,
          endAt: job.end_at ?? null,
          every: job.schedule_str ? parseScheduleStr(job.schedule_str) : null,
        }),
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/jobs/:job',
      tag: 'jobs',
      summary: 'Get a job by name',
      params: jobPath,
      responses: readResponses('The job', jobView, 'Unknown project or job'),
      handle: async ({ params }) => ({ status: 200, body: await jobs.get(params.project, params.job) }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/jobs/:job/history',
      tag: 'jobs',
      summary: "A job's runs, oldest first",
      params: jobPath,
      responses: readResponses('Runs', z.array(jobRunView), 'Unknown project or job'),
      handle: async ({ params }) => ({ status: 200, body: await jobs.history(params.project, params.job) }),
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/jobs/:job',
      tag: 'jobs',
      summary:
        'Delete a job (its history goes with it); ?forget=true also forgets the secrets its statements hold, for good',
      params: jobPath,
      query: forgetQuery,
      responses: deleteResponses('Unknown project or job'),
      handle: async ({ params, query }) => {
        await jobs.remove(params.project, params.job, false, { forget: query.forget });
        return { status: 204 };
      },
    });
