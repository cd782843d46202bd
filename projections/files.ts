import type { FileDeleted, FileUploaded } from '../events';
import type { BlobStore } from '../src/files/blobs';
import { fileStream } from '../src/files/decider';
import { createFileTableSql, FILES_SCHEMA } from '../src/files/load';
import type { SchemaProjection, TableProjection } from '../src/projection/types';
import { nameKey } from '../src/shared/names';

/** `files`: one row per uploaded file (what `GET /api/files` lists). */
export const filesProjection: TableProjection = {
  table: 'files',
  key: 'KEY',
  columns: [
    { name: 'KEY', type: 'VARCHAR' },
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'ORIGINAL_NAME', type: 'VARCHAR' },
    { name: 'FORMAT', type: 'VARCHAR' },
    { name: 'SIZE', type: 'BIGINT' },
    { name: 'DIGEST', type: 'VARCHAR' },
    { name: 'ROW_COUNT', type: 'BIGINT' },
    { name: 'COLUMNS', type: 'JSON' },
    { name: 'UPLOADED_AT', type: 'TIMESTAMP' },
    { name: 'VERSION', type: 'BIGINT' },
  ],
  handles: ['FileUploaded', 'FileDeleted'],
  apply: (event, rows) => {
    if (event.type === 'FileUploaded') {
      const d = (event as unknown as FileUploaded).data;
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
        VERSION: event.meta.position,
      });
    } else rows.delete(nameKey((event as unknown as FileDeleted).data.name));
  },
};

/** The uploaded files themselves: each a table `files.<name>` (schema mdb_files), loaded from its blob. */
export const fileTablesProjection = (blobs: BlobStore): SchemaProjection => ({
  name: 'file-tables',
  version: 2,
  handles: ['FileUploaded', 'FileDeleted'],
  prepare: async (c) => {
    await c.run(`CREATE SCHEMA IF NOT EXISTS ${FILES_SCHEMA}`);
  },
  apply: async (event, c, log) => {
    if (event.type === 'FileUploaded') {
      const d = (event as unknown as FileUploaded).data;
      let path = await blobs.findLocal(d.digest, d.format);
      if (path === null) {
        // Bytes are released only once no file uses them, i.e. after a later event deleted or
        // replaced this file (which a replay has not reached yet): its table would go anyway.
        const { events: later } = await log.readStream(fileStream(d.name), event.meta.streamPosition);
        if (later.length > 0) return;
        path = await blobs.ensureLocal(d.digest, d.format); // throws: the bytes of a live file are lost
      }
      await c.run(createFileTableSql(nameKey(d.name), path, d));
    } else {
      await c.run(
        `DROP TABLE IF EXISTS ${FILES_SCHEMA}."${nameKey((event as unknown as FileDeleted).data.name)}"`,
      );
    }
  },
  drop: async (c) => {
    await c.run(`DROP SCHEMA IF EXISTS ${FILES_SCHEMA} CASCADE`);
  },
});
