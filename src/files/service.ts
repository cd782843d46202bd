import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { settled, type AppContext } from '../context';
import { streamCommand } from '../projectCommand';
import { invalid, isNotFoundError, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { Unstamped } from '../shared/params';
import type { BlobStore } from '../storage/blobs';
import { sha256File } from '../storage/blobs';
import { blobClaimsAggregate, blobStream, fileAggregate, fileStream, type FileState } from './state';
import { decideBlobClaim, decideFile, type FileCommand } from './decider';
import { analyzeFile, detectFormat, readHead, storedFormat } from './load';
import { storeDocumentSections } from './documents';
import { markdownFromUrl } from './markdown';
import { isDocumentKind } from '../engines/documents/convert';
import { presentFile } from './present';
import { fileKeysWithDigest, fileRowByName, fileRows } from './projection';

/** MindsDB: a file name has no extension and no path; ours are identifiers, so they work in SQL too. */
export const validateFileName = (name: string) => {
  if (name.includes('/') || name.includes('\\') || name.includes('..'))
    throw invalid('File name cannot contain path separators or ".."', 'Invalid file name');
  if (name.includes('.')) throw invalid('File name cannot contain extension.', 'Invalid file name');
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name))
    throw invalid(
      'File name may contain only letters, digits and underscores, must not start with a digit, and is at most 63 characters',
      'Invalid file name',
    );
  return name;
};

/**
 * An upload as it landed: its size, its format (from its name and first bytes), its columns, and
 * the file whose bytes are stored for it (`stored`: the upload itself, or a document's sections).
 */
const examine = async (ctx: AppContext, tempPath: string, originalName: string | null) => {
  const size = (await fs.promises.stat(tempPath)).size;
  if (size === 0) throw invalid('The uploaded file is empty', 'Empty file');
  const format = detectFormat(originalName, await readHead(tempPath));
  if (isDocumentKind(format)) {
    const stored = `${tempPath}.ndjson`;
    const analysis = await storeDocumentSections(
      ctx,
      { path: tempPath, size, kind: format, originalName },
      stored,
    );
    return { size, format, analysis, stored };
  }
  // Analysed where it landed, before it is stored: a rejected upload leaves no blob behind.
  const analysis = await ctx.duck.withReader((c) =>
    analyzeFile(c, tempPath, format, { maxColumns: ctx.config.fileMaxColumns }),
  );
  if (analysis.columns.length === 0) throw invalid('The file has no columns', 'Unreadable file');
  return { size, format, analysis, stored: tempPath };
};

/** The commands on a file's stream and on its blobs' claims (each blob's stream). */
const fileStreams = (ctx: AppContext, blobs: BlobStore) => {
  /** Runs a file command; answers the file's state the events were decided on. */
  const run = async (name: string, command: Unstamped<FileCommand>) => {
    let before = { status: 'none' } as FileState;
    const outcome = await streamCommand(ctx, {
      stream: fileStream(name),
      aggregate: fileAggregate,
      command,
      decide: (stamped, s) => {
        before = s;
        return decideFile(stamped, s);
      },
      answer: 'caller',
    });
    return { before, lastPosition: outcome.lastPosition };
  };

  /** Claims or gives up a file's use of a blob, on the blob's stream; the caller holds its lock. */
  const claim = async (type: 'ClaimBlob' | 'UnclaimBlob', digest: string, file: string) => {
    // Files uploaded before claims were recorded use blobs too: the read model knows them.
    const legacyUsers = await fileKeysWithDigest(ctx.duck, digest);
    const outcome = await ctx.commands.run(blobStream(digest), blobClaimsAggregate, (s) =>
      decideBlobClaim({ type, digest, file, legacyUsers, now: ctx.clock() }, s),
    );
    return outcome.events;
  };

  /**
   * `file` no longer uses the blob; the last user out removes its bytes (disk and PostgreSQL).
   * Answers the position of the last event it appended, for the write to wait for.
   */
  const giveUp = (digest: string, file: string) =>
    blobs.withBlob(digest, async (blob) => {
      const events = await claim('UnclaimBlob', digest, file);
      if (events.some((e) => e.type === 'FileBlobReleased')) await blob.remove();
      return events.at(-1)?.meta.position ?? null;
    });

  /** After a file stopped using a blob (deleted, replaced): a failure leaves garbage, never harm. */
  const releaseQuietly = (digest: string, file: string): Promise<bigint | null> =>
    giveUp(digest, file).catch((err: unknown) => {
      ctx.logger.warn({ err, digest, file }, 'blob not released; its bytes stay until a later release');
      return null;
    });
  return { run, claim, releaseQuietly };
};

export const filesService = (ctx: AppContext, blobs: BlobStore) => {
  const tempDir = path.join(ctx.config.dataDir, 'files', 'incoming');
  fs.mkdirSync(tempDir, { recursive: true });

  const { run, claim, releaseQuietly } = fileStreams(ctx, blobs);

  const find = async (name: string) => {
    const row = await fileRowByName(ctx.duck, name);
    return row ? presentFile(row) : undefined;
  };

  /** Where an upload streams to before it is verified (same disk as the blobs: a rename moves it). */
  const tempPath = () => path.join(tempDir, `${crypto.randomUUID()}.upload`);

  return {
    tempPath,

    /** `TO_MARKDOWN('https://…')`: the document at a URL as markdown, through the outbound policy. */
    markdownFromUrl: (url: string, signal?: AbortSignal) =>
      markdownFromUrl(ctx, { tempPath, outbound: ctx.config.outbound }, url, signal),

    /**
     * Turns a fully received temporary file into `files.<name>`: analyse, store, record, project.
     * `expected`: the digest of the file this content was made from (null: there was none), when it
     * was (an append); the upload is refused as a conflict if the file changed since (decider.ts).
     * `sha256`: the digest of `tempPath`'s bytes, taken as they were written (else they are read again).
     */
    register: async (
      name: string,
      tempPath: string,
      originalName: string | null,
      { expected, sha256 }: { expected?: string | null; sha256?: string } = {},
    ) => {
      try {
        validateFileName(name);
        const { size, format, analysis, stored } = await examine(ctx, tempPath, originalName);
        // A document's blob is its converted sections, not the bytes received.
        const digest = stored === tempPath && sha256 !== undefined ? sha256 : await sha256File(stored);
        const file = nameKey(name);
        // Under the blob's lock: claim it, store its bytes, record the file. A refusal after the
        // claim gives it up again, so no bytes stay behind for a file that was never recorded.
        const recorded = await blobs.withBlob(digest, async (blob) => {
          const claimedNow = (await claim('ClaimBlob', digest, file)).length > 0;
          try {
            await blob.put(stored, storedFormat(format));
            return await run(name, {
              type: 'UploadFile',
              data: { name, originalName, digest, size, format, ...analysis },
              ...(expected !== undefined ? { expected } : {}),
            });
          } catch (error) {
            if (claimedNow) {
              const events = await claim('UnclaimBlob', digest, file).catch(() => []);
              if (events.some((e) => e.type === 'FileBlobReleased')) await blob.remove();
            }
            throw error;
          }
        });
        const replaced = recorded.before;
        const released =
          replaced.status === 'live' && replaced.digest !== digest
            ? await releaseQuietly(replaced.digest, file)
            : null;
        // Read-your-writes covers the release too: it was appended after the upload, and a poll
        // (PostgreSQL) may have projected the upload alone, so waiting for the upload only would
        // answer before the release is in the read model.
        await settled(ctx, recorded.lastPosition);
        await settled(ctx, released);
        return (await find(name))!;
      } finally {
        await fs.promises.rm(tempPath, { force: true });
        await fs.promises.rm(`${tempPath}.ndjson`, { force: true });
      }
    },

    list: () => ctx.cached('files', async () => (await fileRows(ctx.duck)).map(presentFile)),

    find,

    /** The digest of the live file `name` in the read model (null: none), read before its rows are. */
    digestOf: async (name: string): Promise<string | null> =>
      (await fileRowByName(ctx.duck, name))?.DIGEST ?? null,

    remove: async (name: string) => {
      try {
        const deleted = await run(name, { type: 'DeleteFile', data: { name } });
        const released =
          deleted.before.status === 'live'
            ? await releaseQuietly(deleted.before.digest, nameKey(name))
            : null;
        // The release's events come after the deletion's: both are this write's (see register).
        await settled(ctx, deleted.lastPosition);
        await settled(ctx, released);
      } catch (error) {
        if (isNotFoundError(error)) throw notFound(`There is no file with name '${name}'`, 'File not found');
        throw error;
      }
    },
  };
};

export type FilesService = ReturnType<typeof filesService>;
