import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const fileResource: ResourceDeclaration = { kind: 'file' };
const fileBlobResource: ResourceDeclaration = { kind: 'fileBlob' };

/**
 * Table formats, then document formats (pdf, docx, html, md, txt): a document's blob holds its
 * converted sections as NDJSON (src/engines/documents), loaded as its table on every replay.
 */
export const fileFormats = [
  'csv',
  'tsv',
  'json',
  'ndjson',
  'parquet',
  'pdf',
  'docx',
  'html',
  'md',
  'txt',
] as const;
export type FileFormat = (typeof fileFormats)[number];

const column = z.object({ name: z.string(), type: z.string() });

/**
 * An uploaded file: its bytes are stored content-addressed (sha256), and everything needed to load
 * them the same way on every replay is recorded here (the CSV dialect DuckDB sniffed, the column
 * types we inferred), so a rebuilt table is identical to the first.
 */
export const FileUploaded = defineEvent(
  'FileUploaded',
  z.object({
    name: z.string(),
    originalName: z.string().nullable(),
    digest: z.string().regex(/^[0-9a-f]{64}$/),
    size: z.number().int().min(0),
    format: z.enum(fileFormats),
    csv: z
      .object({ delimiter: z.string(), quote: z.string(), escape: z.string(), header: z.boolean() })
      .nullable(),
    columns: z.array(column),
    rowCount: z.number().int().min(0),
    uploadedAt: z.iso.datetime(),
  }),
  { resource: fileResource },
);
export const FileDeleted = defineEvent(
  'FileDeleted',
  z.object({ name: z.string(), deletedAt: z.iso.datetime() }),
  { resource: fileResource },
);

/**
 * Who uses a stored blob, on the blob's own stream (`file-blob-<digest>`), so deciding whether its
 * bytes may go is a decision on one stream's state, not a guess from a read model that may lag.
 * `file` is the file's name key. A file claims the blob before its `FileUploaded` is appended.
 */
export const FileBlobClaimed = defineEvent(
  'FileBlobClaimed',
  z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/), file: z.string(), claimedAt: z.iso.datetime() }),
  { resource: fileBlobResource },
);
/** The file was deleted or replaced by other bytes (or its upload was refused after the claim). */
export const FileBlobUnclaimed = defineEvent(
  'FileBlobUnclaimed',
  z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/), file: z.string(), unclaimedAt: z.iso.datetime() }),
  { resource: fileBlobResource },
);
/** No file uses the blob any more: its bytes are removed (a later upload of them stores them again). */
export const FileBlobReleased = defineEvent(
  'FileBlobReleased',
  z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/), releasedAt: z.iso.datetime() }),
  { resource: fileBlobResource },
);

export type FileUploaded = EventOf<typeof FileUploaded>;
export type FileDeleted = EventOf<typeof FileDeleted>;
export type FileBlobClaimed = EventOf<typeof FileBlobClaimed>;
export type FileBlobUnclaimed = EventOf<typeof FileBlobUnclaimed>;
export type FileBlobReleased = EventOf<typeof FileBlobReleased>;
export type FileEvent = FileUploaded | FileDeleted;
export type FileBlobEvent = FileBlobClaimed | FileBlobUnclaimed | FileBlobReleased;
export const fileContracts = [
  FileUploaded,
  FileDeleted,
  FileBlobClaimed,
  FileBlobUnclaimed,
  FileBlobReleased,
] as const;
