import { nameKey } from '../../../shared/names';
import type { TableFace } from '../face';
import { systemFace } from '../system/face';

/** An uploaded file, `files.<name>`: read by DuckDB from the files schema, as the catalog names it. */
export const fileFace: TableFace = {
  kind: 'file',
  recognise: (name, context) =>
    nameKey(name.database) === 'files' ? systemFace.recognise(name, context) : Promise.resolve(undefined),
};
