import type { AnyRecordedEvent, FileDeleted, FileUploaded } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { notFound } from '../shared/errors';
import { nameKey } from '../shared/names';

export type FileState =
  { status: 'none' } | { status: 'live'; name: string; digest: string } | { status: 'deleted' };

export const fileAggregate: Aggregate<FileState> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event: AnyRecordedEvent) => {
    if (event.type === 'FileUploaded') {
      const d = (event as unknown as FileUploaded).data;
      return { status: 'live', name: d.name, digest: d.digest };
    }
    if (event.type === 'FileDeleted') return { status: 'deleted' };
    return state;
  },
};

export const fileStream = (name: string) => `file-${nameKey(name)}`;

type Now = { now: Date };
export type FileCommand =
  | { type: 'UploadFile'; data: Omit<FileUploaded['data'], 'uploadedAt'>; metadata: Now }
  | { type: 'DeleteFile'; data: { name: string }; metadata: Now };

/** Uploading a name that exists replaces the file (a new event); deleting needs a live file. */
export const decideFile = (command: FileCommand, state: FileState): (FileUploaded | FileDeleted)[] => {
  switch (command.type) {
    case 'UploadFile':
      return [
        { type: 'FileUploaded', data: { ...command.data, uploadedAt: command.metadata.now.toISOString() } },
      ];
    case 'DeleteFile':
      if (state.status !== 'live')
        throw notFound(`There is no file with name '${command.data.name}'`, 'File not found');
      return [
        { type: 'FileDeleted', data: { name: state.name, deletedAt: command.metadata.now.toISOString() } },
      ];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
