import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { z } from 'zod';
import { fileFormats } from '../../events';
import { problem, type Api } from '../http/api';
import { presentedOnce } from '../http/keptJson';
import { multipartParser } from '../http/multipart';
import type { OutboundPolicy } from '../http/outbound';
import { DomainError, invalid, notFound } from '../shared/errors';
import type { FilesService } from './service';
import { validateFileName } from './service';
import { receiveUrl, tooLarge } from './download';

/** A file as the list shows it: as the service presents it. */
const asListed = <T>(file: T) => file;
import { uploadLog, uploadsInProgress, type UploadLog } from './uploadLog';
import { sha256Stage } from './digest';

const fileView = z.object({
  name: z.string(),
  row_count: z.number().int(),
  columns: z.array(z.string()),
  column_types: z.record(z.string(), z.string()),
  format: z.enum(fileFormats),
  size: z.number().int(),
  original_name: z.string().nullable(),
  uploaded_at: z.string(),
});

const urlUpload = z.object({ source_type: z.literal('url'), source: z.string().url() });

export type UploadOptions = {
  maxBytes: number;
  urlUploadEnabled: boolean;
  logger: Logger;
  /** Where a file URL may be fetched from (OUTBOUND_ALLOW). */
  outbound: Pick<OutboundPolicy, 'get'>;
};

/** An upload on disk: its name as sent, and the sha256 of its bytes, taken as they were written. */
type Received = { originalName: string | null; sha256: string };

/** Streams the multipart field `file` to disk, never holding the file in memory. */
const receiveMultipart = (
  request: import('express').Request,
  target: string,
  maxBytes: number,
  log: UploadLog,
): Promise<Received> =>
  new Promise((resolve, reject) => {
    let received: Promise<Received> | undefined;
    const parser = multipartParser(request, { files: 1, fileSize: maxBytes }, reject);
    if (!parser) return;
    parser.on('file', (field, stream, info) => {
      if (field !== 'file') {
        stream.resume();
        return;
      }
      let truncated = false;
      stream.on('limit', () => {
        truncated = true;
      });
      const hashed = sha256Stage();
      received = pipeline(stream, log.counter(), hashed.stage, fs.createWriteStream(target)).then(() => {
        if (truncated) throw tooLarge(maxBytes);
        return { originalName: info.filename ?? null, sha256: hashed.digest() };
      });
      // A failed write (the directory gone, a full disk) answers at once: the parser may never
      // close, and left unhandled until it did, the rejection ended the process.
      received.catch(reject);
    });
    parser.on('close', () => {
      if (!received) reject(invalid('The multipart body has no field named "file"', 'Missing file'));
      else received.then(resolve, reject);
    });
    request.pipe(parser);
  });

/** Kept here too: the URL download's specs import it from the routes. */
export { receiveUrl };

const uploadView = z.object({
  name: z.string(),
  phase: z.enum(['receiving', 'loading']),
  bytes: z.number().int(),
  declared_bytes: z.number().int().nullable(),
  percent: z.number().int().nullable(),
  ms: z.number().int(),
});

export const fileRoutes = (api: Api, files: FilesService, options: UploadOptions) => {
  const inProgress = uploadsInProgress();
  return api
    .add({
      method: 'get',
      path: '/api/files',
      tag: 'files',
      summary: 'List uploaded files',
      responses: { 200: { description: 'Files', schema: z.array(fileView) } },
      handle: async () => ({ status: 200, body: presentedOnce(await files.list(), asListed) }),
    })
    .add({
      method: 'get',
      path: '/api/files/:name/upload',
      tag: 'files',
      summary:
        'An upload under way in this process: receiving (bytes, and the share of the declared length) or loading (analysed, stored and loaded as the table)',
      params: z.object({ name: z.string().min(1) }),
      responses: {
        200: { description: 'The upload under way', schema: uploadView },
        400: problem('Not a file name'),
        404: problem('No upload of this name is under way here'),
      },
      handle: async ({ params }) => {
        // A name no upload could have is refused as the upload itself would refuse it.
        validateFileName(params.name);
        const progress = inProgress.of(params.name);
        if (!progress)
          throw notFound(`No upload of file '${params.name}' is under way`, 'No upload under way');
        const { declaredBytes, ...rest } = progress;
        return { status: 200, body: { name: params.name, ...rest, declared_bytes: declaredBytes } };
      },
    })
    .add({
      method: 'put',
      path: '/api/files/:name',
      tag: 'files',
      summary:
        'Upload a file (multipart field "file": CSV, TSV, JSON, NDJSON or Parquet; or a document: PDF, DOCX, HTML, Markdown or text, a row per section), or {"source_type":"url","source":…}',
      params: z.object({ name: z.string().min(1) }),
      documentedBody: {
        contentType: 'multipart/form-data',
        schema: z.object({ file: z.string().describe('The file (binary)') }),
      },
      responses: {
        200: { description: 'Stored and loaded as files.<name>', schema: fileView },
        400: problem('Bad name, unreadable file, or URL upload disabled'),
        413: problem('Larger than the upload limit'),
      },
      handle: async ({ params, request }) => {
        validateFileName(params.name);
        const temp = files.tempPath();
        let received: Received;
        const logOf = (source: 'multipart' | 'url', declaredBytes: number | null) =>
          uploadLog(options.logger, { file: params.name, source, declaredBytes, inProgress });
        let log: UploadLog | undefined;
        try {
          if (request.is('multipart/form-data')) {
            // The body's length: the file's, give or take the multipart framing.
            const length = Number(request.headers['content-length']);
            log = logOf('multipart', Number.isFinite(length) && length > 0 ? length : null);
            received = await receiveMultipart(request, temp, options.maxBytes, log);
          } else if (request.is('application/json')) {
            const body = urlUpload.safeParse(request.body);
            if (!body.success)
              throw invalid(
                'Send the file as multipart/form-data (field "file"), or {"source_type": "url", "source": "<url>"}',
              );
            if (!options.urlUploadEnabled)
              throw invalid('URL file upload is disabled.', 'URL file upload is disabled');
            log = logOf('url', null);
            received = await receiveUrl(body.data.source, temp, options.maxBytes, log, options.outbound);
          } else
            throw new DomainError(
              'UnsupportedMediaType',
              'Unsupported media type',
              'Upload the file as multipart/form-data with a field named "file"',
            );
        } catch (error) {
          log?.failed(error);
          await fs.promises.rm(temp, { force: true });
          throw error;
        }
        log.receivedAll();
        try {
          const file = await files.register(params.name, temp, received.originalName, {
            sha256: received.sha256,
          });
          log.stored(file);
          return { status: 200, body: file };
        } catch (error) {
          log.failed(error);
          throw error;
        }
      },
    })
    .add({
      method: 'delete',
      path: '/api/files/:name',
      tag: 'files',
      summary: 'Delete an uploaded file',
      params: z.object({ name: z.string().min(1) }),
      responses: { 200: { description: 'Deleted' }, 404: problem('No such file') },
      handle: async ({ params }) => {
        await files.remove(params.name);
        return { status: 200, body: {} };
      },
    });
};
