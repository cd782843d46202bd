import {
  allHandled,
  schemaProjection,
  selectColumns,
  selectRow,
  selectRows,
  type RowOf,
} from '../projection/table';
import { deletableTable } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { SchemaProjection, TableReader } from '../projection/types';
import { FILES_SCHEMA, nameKey } from '../shared/names';
import type { BlobStore } from '../storage/blobs';
import { createFileTableSql, storedFormat } from './load';
import { fileStream } from './state';

/** `files`: one row per uploaded file (what `GET /api/files` lists). */
export const filesTable = deletableTable({
  table: 'files',
  key: 'KEY',
  columns: columns(
    `KEY VARCHAR, NAME VARCHAR, ORIGINAL_NAME VARCHAR NULL, FORMAT VARCHAR, SIZE BIGINT, DIGEST VARCHAR,
    ROW_COUNT BIGINT, COLUMNS JSON, UPLOADED_AT TIMESTAMP, VERSION BIGINT`,
  ),
  handles: ['FileUploaded', 'FileDeleted'],
  deletedBy: { type: 'FileDeleted', key: (e) => nameKey(e.data.name) },
  apply: ({ data: d, meta }, rows) =>
    rows.put({
      KEY: nameKey(d.name),
      NAME: d.name,
      ORIGINAL_NAME: d.originalName,
      FORMAT: d.format,
      SIZE: d.size,
      DIGEST: d.digest,
      ROW_COUNT: d.rowCount,
      COLUMNS: d.columns,
      UPLOADED_AT: d.uploadedAt,
      VERSION: meta.position,
    }),
});

/** The uploaded files themselves: each a table `files.<name>` (schema mdb_files), loaded from its blob. */
export const fileTablesProjection = (blobs: BlobStore): SchemaProjection =>
  schemaProjection({
    name: 'file-tables',
    version: 2,
    handles: ['FileUploaded', 'FileDeleted'],
    prepare: async (c) => {
      await c.run(`CREATE SCHEMA IF NOT EXISTS ${FILES_SCHEMA}`);
    },
    apply: async (event, c, log) => {
      switch (event.type) {
        case 'FileUploaded': {
          const d = event.data;
          let path = await blobs.findLocal(d.digest, storedFormat(d.format));
          if (path === null) {
            // Bytes are released only once no file uses them, i.e. after a later event deleted or
            // replaced this file (which a replay has not reached yet): its table would go anyway.
            const { events: later } = await log.readStream(fileStream(d.name), event.meta.streamPosition);
            if (later.length > 0) return;
            path = await blobs.ensureLocal(d.digest, storedFormat(d.format)); // throws: the bytes of a live file are lost
          }
          await c.run(createFileTableSql(nameKey(d.name), path, d));
          return;
        }
        case 'FileDeleted':
          await c.run(`DROP TABLE IF EXISTS ${FILES_SCHEMA}."${nameKey(event.data.name)}"`);
          return;
        default:
          return allHandled(event);
      }
    },
    drop: async (c) => {
      await c.run(`DROP SCHEMA IF EXISTS ${FILES_SCHEMA} CASCADE`);
    },
  });

export type FileRow = RowOf<typeof filesTable.columns>;

export const fileRowByName = async (reader: TableReader, name: string) =>
  selectRow(filesTable, reader, 'SELECT * FROM files WHERE KEY = ?', [nameKey(name)]);

export const fileRows = async (reader: TableReader) =>
  selectRows(filesTable, reader, 'SELECT * FROM files ORDER BY KEY');

/** The files whose table is loaded from these bytes, by name key. */
export const fileKeysWithDigest = async (reader: TableReader, digest: string) =>
  (await selectColumns(filesTable, ['KEY'], reader, 'FROM files WHERE DIGEST = ?', [digest])).map(
    (r) => r.KEY,
  );
