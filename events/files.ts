import { z } from 'zod';
import { defineEvent, type EventOf } from './contract';

export const fileFormats = ['csv', 'tsv', 'json', 'ndjson', 'parquet'] as const;
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
);
export const FileDeleted = defineEvent(
  'FileDeleted',
  z.object({ name: z.string(), deletedAt: z.iso.datetime() }),
);

export type FileUploaded = EventOf<typeof FileUploaded>;
export type FileDeleted = EventOf<typeof FileDeleted>;
export type FileEvent = FileUploaded | FileDeleted;
export const fileContracts = [FileUploaded, FileDeleted] as const;
