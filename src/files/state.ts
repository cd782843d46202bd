import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';

/** An uploaded file as its own stream (`file-<name>`) knows it. */
export type FileState =
  { status: 'none' } | { status: 'live'; name: string; digest: string } | { status: 'deleted' };

export const fileAggregate: Aggregate<FileState> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event: RecordedEvent) => {
    switch (event.type) {
      case 'FileUploaded':
        return { status: 'live', name: event.data.name, digest: event.data.digest };
      case 'FileDeleted':
        return { status: 'deleted' };
      default:
        return state;
    }
  },
};

export const fileStream = (name: string) => `file-${nameKey(name)}`;

/**
 * The files that use one blob. `recorded` is false while the blob's stream is empty: its users
 * then are files uploaded before claims were recorded, adopted from the read model on first use.
 */
export type BlobClaims = { readonly recorded: boolean; readonly files: readonly string[] };

export const blobClaimsAggregate: Aggregate<BlobClaims> = {
  initialState: () => ({ recorded: false, files: [] }),
  evolve: (state, event: RecordedEvent) => {
    switch (event.type) {
      case 'FileBlobClaimed': {
        const { file } = event.data;
        return { recorded: true, files: [...state.files.filter((f) => f !== file), file] };
      }
      case 'FileBlobUnclaimed': {
        const { file } = event.data;
        return { recorded: true, files: state.files.filter((f) => f !== file) };
      }
      case 'FileBlobReleased':
        return { recorded: true, files: [] };
      default:
        return state;
    }
  },
};

export const blobStream = (digest: string) => `file-blob-${digest}`;
