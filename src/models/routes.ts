import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { deleteResponses, readResponses } from '../http/resourceRoutes';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, notFound } from '../shared/errors';
import { createdBody, type ModelView } from './present';
import type { ModelsService } from './service';

/** `POST …/models` takes a CREATE MODEL statement: the SQL engine parses and runs it. */
type CreateModelStatement = {
  createModelFromRest(project: string, query: string): Promise<ModelView>;
};

const modelPath = z.object({ project: z.string().min(1), model: z.string().min(1) });
const modelsPath = z.object({ project: z.string().min(1) });

const rowSchema = z.record(z.string(), z.unknown());
/** `{"data": [rows] | "<json string>", "params": {…}}`, or a bare array of rows. */
const predictBody = z.union([
  z.array(rowSchema),
  z.object({
    data: z.union([z.array(rowSchema), z.string(), rowSchema]),
    params: z.record(z.string(), z.unknown()).optional(),
  }),
]);

const modelView = z.record(z.string(), z.unknown()).describe('MindsDB reduced model dict');

/** A project's models: listing, training and reading one. */
const modelTrainingRoutes = (
  api: Api,
  models: ModelsService,
  projects: ProjectDirectory,
  sql: CreateModelStatement,
) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/models',
      tag: 'models',
      summary: 'List models (every version)',
      params: modelsPath,
      responses: readResponses('Models', z.array(modelView), 'Unknown project'),
      handle: async ({ params }) => ({ status: 200, body: await models.list(params.project) }),
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/models',
      tag: 'models',
      summary: 'Create a model from a CREATE MODEL statement',
      params: modelsPath,
      body: z.object({ query: z.string({ error: 'Missing "query" SQL statement' }) }),
      responses: {
        201: {
          description: 'Created (training started, or done with join_learn_process)',
          schema: modelView,
        },
        400: problem('Invalid or not a CREATE MODEL statement'),
        404: problem('Unknown project or engine'),
        409: problem('The model exists'),
      },
      handle: async ({ params, body }) => {
        await projects.require(params.project);
        const created = await sql.createModelFromRest(params.project, body.query);
        return { status: 201, body: createdBody(created) };
      },
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/models/:model',
      tag: 'models',
      summary: 'Get a model (`name` or `name.version`)',
      params: modelPath,
      responses: readResponses('The model', modelView, 'Unknown project or model'),
      handle: async ({ params }) => ({ status: 200, body: await models.get(params.project, params.model) }),
    });

/** A route's `before`: 404 unless the project and the model its path names exist. */
const modelGuard =
  (projects: ProjectDirectory, models: ModelsService) =>
  async ({ params }: { params: { project: string; model: string } }) => {
    await projects.require(params.project);
    if (!(await models.exists(params.project, params.model)))
      throw notFound(`Model with name ${params.model} not found`, 'Model not found');
  };

export const modelRoutes = (
  api: Api,
  models: ModelsService,
  projects: ProjectDirectory,
  sql: CreateModelStatement,
) => {
  const requireModel = modelGuard(projects, models);
  return modelTrainingRoutes(api, models, projects, sql)
    .add({
      method: 'put',
      path: '/api/projects/:project/models/:model',
      tag: 'models',
      summary: 'Update training options (problem_definition)',
      params: modelPath,
      before: requireModel,
      body: z.object({
        problem_definition: z.record(z.string(), z.unknown(), { error: 'problem_definition required' }),
      }),
      responses: readResponses('Updated', modelView, 'Unknown model'),
      handle: async ({ params, body }) => {
        const pd = body.problem_definition;
        const options = (pd.using as Record<string, unknown> | undefined) ?? pd;
        return { status: 200, body: await models.updateOptions(params.project, params.model, options) };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/models/:model',
      tag: 'models',
      summary: 'Delete a model, or one version (`name.version`)',
      params: modelPath,
      responses: deleteResponses('Unknown project or model'),
      handle: async ({ params }) => {
        await models.remove(params.project, params.model);
        return { status: 204 };
      },
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/models/:model/describe',
      tag: 'models',
      summary: 'Describe a model (?attribute=info|features|model)',
      params: modelPath,
      query: z.object({ attribute: z.string().optional() }),
      responses: { 200: { description: 'Records', schema: z.array(z.record(z.string(), z.unknown())) } },
      handle: async ({ params, query }) => ({
        status: 200,
        body: await models.describe(params.project, params.model, query.attribute),
      }),
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/models/:model/predict',
      tag: 'models',
      summary:
        'Predict for rows: each answer row has the prediction, confidence, bounds, explanation and anomaly',
      params: modelPath,
      before: requireModel,
      body: predictBody,
      responses: {
        200: { description: 'One answer row per input row', schema: z.array(rowSchema) },
        400: problem('The body is not rows'),
        404: problem('Unknown project or model'),
        409: problem('The model is not trained (yet)'),
      },
      handle: async ({ params, body }) => {
        // The body's schema has checked rows given as a list or one object; rows sent as a JSON
        // string are checked here, once parsed.
        let rows: Record<string, unknown>[];
        let options: Record<string, unknown> = {};
        if (Array.isArray(body)) rows = body;
        else {
          options = body.params ?? {};
          const { data } = body;
          if (Array.isArray(data)) rows = data;
          else if (typeof data !== 'string') rows = [data];
          else {
            let parsedJson: unknown;
            try {
              parsedJson = JSON.parse(data);
            } catch {
              throw invalid('"data" is a string but not JSON rows');
            }
            if (parsedJson && !Array.isArray(parsedJson) && typeof parsedJson === 'object')
              parsedJson = [parsedJson];
            const parsed = z.array(rowSchema).safeParse(parsedJson);
            if (!parsed.success) throw invalid('"data" must be a list of rows (objects of column: value)');
            rows = parsed.data;
          }
        }
        const fixed = options.fixed_confidence;
        const answer = await models.predict(params.project, params.model, rows, {
          fixed_confidence: fixed === undefined ? undefined : Number(fixed),
        });
        // Answers hold the JSON body's own values and the model's numbers and strings: nothing to
        // convert (a NaN would be written as null either way).
        return { status: 200, body: answer, jsonSafe: true };
      },
    });
};
