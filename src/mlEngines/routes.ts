import type { Request } from 'express';
import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { multipartParser } from '../http/multipart';
import { DomainError, invalid } from '../shared/errors';
import { resourceName } from '../shared/names';
import type { ByomUpload } from './decider';
import type { MlEnginesService } from './service';

/**
 * A BYOM file's size limit: the code and its requirements travel in one event, which must stay
 * within MAX_EVENT_BYTES (1 MiB by default).
 */
const BYOM_FILE_LIMIT = 256 * 1024;

const tooLarge = (field: string) =>
  new DomainError(
    'PayloadTooLarge',
    'Payload too large',
    `The ${field} file exceeds the BYOM limit of ${BYOM_FILE_LIMIT} bytes`,
  );

const BYOM_TYPES = ['inhouse', 'venv'];

/**
 * The SDK's and MindsDB's form: files `code` (the model's Python code) and `modules` (its
 * requirements), fields `type` (inhouse or venv; inhouse when absent) and `source` (the name again).
 */
const receiveByom = (request: Request): Promise<ByomUpload> =>
  new Promise((resolve, reject) => {
    const parser = multipartParser(request, { files: 2, fileSize: BYOM_FILE_LIMIT }, reject);
    if (!parser) return;
    const files = new Map<string, Promise<{ fileName: string; content: string }>>();
    let type = 'inhouse';
    parser.on('field', (name, value) => {
      if (name === 'type') type = value;
    });
    parser.on('file', (field, stream, info) => {
      if (field !== 'code' && field !== 'modules') {
        stream.resume();
        return;
      }
      const received = new Promise<{ fileName: string; content: string }>((done, fail) => {
        const chunks: Buffer[] = [];
        let truncated = false;
        stream.on('limit', () => {
          truncated = true;
        });
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', fail);
        stream.on('end', () =>
          truncated
            ? fail(tooLarge(field))
            : done({ fileName: info.filename || field, content: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      // Read once both files are in; when the other never comes (a body cut off in this one, whose
      // failure the parser reports too), nobody reads it, and its rejection was left unhandled.
      received.catch(() => undefined);
      files.set(field, received);
    });
    parser.on('close', () => {
      const code = files.get('code');
      const modules = files.get('modules');
      if (!code || !modules) {
        reject(
          invalid(
            'A BYOM engine needs two files: code (the model, Python) and modules (its requirements)',
            'Missing BYOM code',
          ),
        );
        return;
      }
      if (!BYOM_TYPES.includes(type)) {
        reject(invalid(`type must be one of ${BYOM_TYPES.join(', ')}, not ${type}`));
        return;
      }
      Promise.all([code, modules]).then(([c, m]) => resolve({ type, code: c, modules: m }), reject);
    });
    request.pipe(parser);
  });

const byomBody = {
  contentType: 'multipart/form-data',
  schema: z.object({
    code: z.string().describe('The model code (Python file)'),
    modules: z.string().describe('Its requirements (requirements.txt)'),
    type: z.enum(['inhouse', 'venv']).optional(),
  }),
};

const requireMultipart = (request: Request) => {
  if (!request.is('multipart/form-data'))
    throw new DomainError(
      'UnsupportedMediaType',
      'Unsupported media type',
      'Upload the BYOM engine as multipart/form-data with files code and modules',
    );
};

const params = z.object({ name: resourceName('ML engine') });

/** MindsDB's BYOM routes, which the JS SDK's MLEngines.createMLEngine / updateMLEngine call. */
export const mlEngineRoutes = (api: Api, engines: MlEnginesService) =>
  api
    .add({
      method: 'put',
      path: '/api/handlers/byom/:name',
      tag: 'ml_engines',
      summary: 'Create a BYOM ML engine from uploaded model code (kept; not run by this service)',
      params,
      documentedBody: byomBody,
      responses: {
        200: { description: 'Created (an empty answer, as MindsDB)' },
        400: problem('Bad name, missing file or type'),
        409: problem('An ML engine of that name exists'),
        413: problem('A file larger than the BYOM limit'),
      },
      handle: async ({ params: p, request }) => {
        requireMultipart(request);
        await engines.createByom(p.name, await receiveByom(request));
        return { status: 200, body: '' };
      },
    })
    .add({
      method: 'post',
      path: '/api/handlers/byom/:name',
      tag: 'ml_engines',
      summary: 'Upload a new version of a BYOM ML engine’s code',
      params,
      documentedBody: byomBody,
      responses: {
        200: {
          description: 'The engine’s code versions',
          schema: z.object({
            last_engine_version: z.number().int(),
            engine_versions: z.array(z.number().int()),
          }),
        },
        400: problem('Missing file or type, or not a BYOM engine'),
        404: problem('No ML engine of that name'),
        413: problem('A file larger than the BYOM limit'),
      },
      handle: async ({ params: p, request }) => {
        requireMultipart(request);
        return { status: 200, body: await engines.updateByom(p.name, await receiveByom(request)) };
      },
    });
