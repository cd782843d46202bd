import type { AnyRecordedEvent, FileBlobClaimed, FileBlobEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';

/**
 * The files that use one blob. `recorded` is false while the blob's stream is empty: its users
 * then are files uploaded before claims were recorded, adopted from the read model on first use.
 */
export type BlobClaims = { readonly recorded: boolean; readonly files: readonly string[] };

export const blobClaimsAggregate: Aggregate<BlobClaims> = {
  initialState: () => ({ recorded: false, files: [] }),
  evolve: (state, event: AnyRecordedEvent) => {
    const e = event as FileBlobEvent;
    switch (e.type) {
      case 'FileBlobClaimed':
        return { recorded: true, files: [...state.files.filter((f) => f !== e.data.file), e.data.file] };
      case 'FileBlobUnclaimed':
        return { recorded: true, files: state.files.filter((f) => f !== e.data.file) };
      case 'FileBlobReleased':
        return { recorded: true, files: [] };
      default:
        return state;
    }
  },
};

export const blobStream = (digest: string) => `file-blob-${digest}`;

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
 * A file claims a blob before it refers to it, and gives up its claim once it no longer does; the
 * last claim given up releases the blob (its bytes are then removed). Pure: the caller holds the
 * blob's lock, so no upload of the same bytes can slip between this decision and the removal.
 */
export const decideBlobClaim = (command: BlobClaimCommand, state: BlobClaims): FileBlobEvent[] => {
  const adopted = state.recorded ? [] : command.legacyUsers.filter((f) => f !== command.file);
  const users = [...state.files, ...adopted];
  switch (command.type) {
    case 'ClaimBlob':
      if (users.includes(command.file)) return adopted.map((f) => claimed(command, f));
      return [...adopted, command.file].map((f) => claimed(command, f));
    case 'UnclaimBlob': {
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
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
