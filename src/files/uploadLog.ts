import { Transform } from 'node:stream';
import type { Logger } from 'pino';
import { isDomainError } from '../shared/errors';
import { nameKey } from '../shared/names';
import { currentRequest } from '../shared/requestContext';

/** Bytes between two progress lines of one upload: a 1 GiB file logs sixteen. */
const UPLOAD_PROGRESS_EVERY_BYTES = 64 * 1024 * 1024;

const mib = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;

/**
 * What the uploader can ask of an upload under way (GET /api/files/{name}/upload): `receiving` its
 * bytes (with the share of the declared length, when the request declared one), then `loading`
 * (analysed, stored, recorded and loaded as the table: the server's own work, most of a large
 * file's time). Kept in the process's memory, not in the log: it is no fact about the file.
 */
export type UploadProgress = {
  readonly phase: 'receiving' | 'loading';
  readonly bytes: number;
  readonly declaredBytes: number | null;
  readonly percent: number | null;
  readonly ms: number;
};

/** The uploads this process has under way, the latest of each file name. */
export const uploadsInProgress = () => {
  const byName = new Map<string, () => UploadProgress>();
  return {
    /** Notes an upload under way; answers what ends the note (a later upload of the name keeps its own). */
    note: (file: string, progress: () => UploadProgress) => {
      const key = nameKey(file);
      byName.set(key, progress);
      return () => {
        if (byName.get(key) === progress) byName.delete(key);
      };
    },
    of: (file: string): UploadProgress | undefined => byName.get(nameKey(file))?.(),
  };
};

export type UploadsInProgress = ReturnType<typeof uploadsInProgress>;

/**
 * One upload's lines in the log, each with the request id: started, progress every `everyBytes`
 * received (large files take minutes), received (the bytes are on disk), stored (analysed and
 * recorded: rows, columns, format) or failed (why, by its title: a detail may quote the file).
 * Never the file's content.
 */
export const uploadLog = (
  logger: Logger,
  upload: {
    file: string;
    source: 'multipart' | 'url';
    declaredBytes: number | null;
    /** Where the uploader can see it under way, until it is stored or has failed. */
    inProgress?: UploadsInProgress;
  },
  everyBytes = UPLOAD_PROGRESS_EVERY_BYTES,
) => {
  const started = Date.now();
  const about = { reqId: currentRequest()?.requestId, file: upload.file };
  const ms = () => Date.now() - started;
  let bytes = 0;
  let nextProgress = everyBytes;
  let phase: UploadProgress['phase'] = 'receiving';
  // The declared length includes the multipart framing: a share, never a promise of 100.
  const percent = () =>
    phase === 'receiving' && upload.declaredBytes
      ? Math.min(99, Math.floor((bytes / upload.declaredBytes) * 100))
      : null;
  const ended =
    upload.inProgress?.note(upload.file, () => ({
      phase,
      bytes,
      declaredBytes: upload.declaredBytes,
      percent: percent(),
      ms: ms(),
    })) ?? (() => undefined);
  logger.info({ ...about, source: upload.source, declaredBytes: upload.declaredBytes }, 'upload started');

  /** Counts bytes as they arrive; a line each time another `everyBytes` have come. */
  const received = (chunk: number) => {
    bytes += chunk;
    if (bytes < nextProgress) return;
    while (nextProgress <= bytes) nextProgress += everyBytes;
    const seconds = Math.max(ms(), 1) / 1000;
    logger.info(
      {
        ...about,
        bytes,
        ...(upload.declaredBytes ? { percent: Math.floor((bytes / upload.declaredBytes) * 100) } : {}),
        mibPerSecond: Math.round((mib(bytes) / seconds) * 10) / 10,
        ms: ms(),
      },
      'upload progress',
    );
  };

  return {
    received,
    /** A stream stage that counts the bytes passing through it (the multipart file on its way to disk). */
    counter: () =>
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          received(chunk.length);
          done(null, chunk);
        },
      }),
    /** Every byte is on disk; analysis (a full read by DuckDB) comes next. */
    receivedAll: () => {
      phase = 'loading';
      logger.info({ ...about, bytes, ms: ms() }, 'upload received');
    },
    stored: (file: { row_count: number; columns: readonly string[]; format: string; size: number }) => {
      ended();
      logger.info(
        {
          ...about,
          bytes: file.size,
          rows: file.row_count,
          columns: file.columns.length,
          format: file.format,
          ms: ms(),
        },
        'upload stored',
      );
    },
    /**
     * Not stored, or not answered as stored: a refusal by its title, anything else by its name (a
     * `WriteAccepted` is stored but not yet readable; a bug is logged in full by the error mapper).
     */
    failed: (error: unknown) => {
      ended();
      logger.info(
        {
          ...about,
          bytes,
          reason: isDomainError(error) ? error.title : error instanceof Error ? error.name : 'unknown',
          ms: ms(),
        },
        'upload failed',
      );
    },
  };
};

export type UploadLog = ReturnType<typeof uploadLog>;
