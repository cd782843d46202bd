import type { FilesService } from './service';
import { nameKey } from '../shared/names';
import type { SqlLookups } from '../sql/handlers';

/** An uploaded file is a table of the `files` database, named by its key. */
export const fileLookup = (files: Pick<FilesService, 'find'>) =>
  ({
    isFile: async (name) => ((await files.find(name)) ? nameKey(name) : undefined),
  }) satisfies Pick<SqlLookups, 'isFile'>;
