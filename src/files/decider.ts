import type { FileBlobClaimed, FileBlobEvent, FileDeleted, FileUploaded } from '../../events';
import { conflict, notFound } from '../shared/errors';
import { decideByType, type Now } from '../shared/decision';
import type { BlobClaims, FileState } from './state';

export type FileCommand =
  | {
      type: 'UploadFile';
      data: Omit<FileUploaded['data'], 'uploadedAt'>;
      /**
       * The file this upload replaces, as the writer read it (its digest; null: no live file), when
       * the new content was made from it (SQL's INSERT INTO files.f appends to what it read): a
       * file changed since is a conflict, never a lost write. Absent: the upload replaces whatever is there.
       */
      expected?: string | null;
      metadata: Now;
    }
  | { type: 'DeleteFile'; data: { name: string }; metadata: Now };

type Command<T extends FileCommand['type']> = Extract<FileCommand, { type: T }>;

const uploadFile = (command: Command<'UploadFile'>, state: FileState): FileUploaded[] => {
  const current = state.status === 'live' ? state.digest : null;
  if (command.expected !== undefined && command.expected !== current)
    throw conflict(
      `The file ${command.data.name} changed while this write was reading it; nothing was written`,
      'File changed',
    );
  return [
    { type: 'FileUploaded', data: { ...command.data, uploadedAt: command.metadata.now.toISOString() } },
  ];
};

const deleteFile = (command: Command<'DeleteFile'>, state: FileState): FileDeleted[] => {
  if (state.status !== 'live')
    throw notFound(`There is no file with name '${command.data.name}'`, 'File not found');
  return [{ type: 'FileDeleted', data: { name: state.name, deletedAt: command.metadata.now.toISOString() } }];
};

/** Uploading a name that exists replaces the file (a new event); deleting needs a live file. */
export const decideFile = decideByType<FileCommand, FileState, FileUploaded | FileDeleted>({
  UploadFile: uploadFile,
  DeleteFile: deleteFile,
});

type Common = {
  digest: string;
  /** The file's name key. */
  file: string;
  /**
   * Live files using this blob according to the read model, for a blob whose stream is still empty
   * (files uploaded before claims were recorded); ignored once the stream holds claims.
   */
  legacyUsers: readonly string[];
  now: Date;
};
export type BlobClaimCommand = ({ type: 'ClaimBlob' } | { type: 'UnclaimBlob' }) & Common;

const claimed = (c: Common, file: string): FileBlobClaimed => ({
  type: 'FileBlobClaimed',
  data: { digest: c.digest, file, claimedAt: c.now.toISOString() },
});

/**
 * The files using a blob: those its claims record, and for a stream holding no claims yet, the
 * read model's users, adopted (each claim then recorded) as any command on it is decided.
 */
const blobUsers = (command: BlobClaimCommand, state: BlobClaims) => {
  const adopted = state.recorded ? [] : command.legacyUsers.filter((f) => f !== command.file);
  return { adopted, users: [...state.files, ...adopted] };
};

const claimBlob = (
  command: Extract<BlobClaimCommand, { type: 'ClaimBlob' }>,
  state: BlobClaims,
): FileBlobEvent[] => {
  const { adopted, users } = blobUsers(command, state);
  if (users.includes(command.file)) return adopted.map((f) => claimed(command, f));
  return [...adopted, command.file].map((f) => claimed(command, f));
};

const unclaimBlob = (
  command: Extract<BlobClaimCommand, { type: 'UnclaimBlob' }>,
  state: BlobClaims,
): FileBlobEvent[] => {
  const { adopted, users } = blobUsers(command, state);
  // Claims are recorded and this file holds none: nothing of its to give up.
  if (state.recorded && !state.files.includes(command.file)) return [];
  const left = users.filter((f) => f !== command.file);
  const unclaimed: FileBlobEvent[] = users.includes(command.file)
    ? [
        {
          type: 'FileBlobUnclaimed',
          data: { digest: command.digest, file: command.file, unclaimedAt: command.now.toISOString() },
        },
      ]
    : [];
  const released: FileBlobEvent[] =
    left.length === 0
      ? [
          {
            type: 'FileBlobReleased',
            data: { digest: command.digest, releasedAt: command.now.toISOString() },
          },
        ]
      : [];
  return [...adopted.map((f) => claimed(command, f)), ...unclaimed, ...released];
};

/**
 * A file claims a blob before it refers to it, and gives up its claim once it no longer does; the
 * last claim given up releases the blob (its bytes are then removed). Pure: the caller holds the
 * blob's lock, so no upload of the same bytes can slip between this decision and the removal.
 */
export const decideBlobClaim = decideByType<BlobClaimCommand, BlobClaims, FileBlobEvent>({
  ClaimBlob: claimBlob,
  UnclaimBlob: unclaimBlob,
});
