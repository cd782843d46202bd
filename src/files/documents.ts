import fs from 'node:fs';
import type { AppContext } from '../context';
import { convertDocument, type DocumentKind, type DocumentSection } from '../engines/documents/convert';
import { invalid } from '../shared/errors';
import { DOCUMENT_COLUMNS, documentSource } from './load';

/** A row of a document's table as its blob holds it (one NDJSON line). */
const rowOf = (s: DocumentSection, kind: DocumentKind, originalName: string | null) => ({
  section: s.section,
  title: s.title,
  content: s.content,
  metadata: { file_name: originalName, format: kind, [kind === 'pdf' ? 'page' : 'section']: s.section },
});

/** Reads a document upload whole, refusing one larger than DOCUMENT_MAX_BYTES before reading it. */
export const readDocument = async (ctx: AppContext, path: string, size: number) => {
  const { maxBytes } = ctx.config.documents;
  if (size > maxBytes)
    throw invalid(
      `The document has ${size} bytes; at most ${maxBytes} are converted (DOCUMENT_MAX_BYTES)`,
      'Document too large',
    );
  return fs.promises.readFile(path);
};

/**
 * A document upload made into what is stored for it: its sections as NDJSON at `ndjsonPath`, the
 * blob its table is loaded from on every replay (the conversion runs once, here; a replay never
 * converts again, so a newer parser cannot change a recorded table). The rows are counted through
 * the source the replay reads, so what is accepted here loads there.
 */
export const storeDocumentSections = async (
  ctx: AppContext,
  upload: { path: string; size: number; kind: DocumentKind; originalName: string | null },
  ndjsonPath: string,
) => {
  const bytes = await readDocument(ctx, upload.path, upload.size);
  const sections = await convertDocument(bytes, upload.kind, ctx.config.documents);
  await fs.promises.writeFile(
    ndjsonPath,
    sections.map((s) => `${JSON.stringify(rowOf(s, upload.kind, upload.originalName))}\n`).join(''),
  );
  const loaded = await ctx.duck
    .withReader(async (c) =>
      Number(
        (await c.runAndReadAll(`SELECT count(*) FROM ${documentSource(ndjsonPath)}`)).getRowsJS()[0]![0],
      ),
    )
    .catch((error: unknown) => {
      // What DuckDB cannot load now, a replay could not either: refused, nothing stored.
      const message = ((error as { message?: string }).message ?? String(error))
        .split(ndjsonPath)
        .join('the sections');
      throw invalid(`The converted document cannot be loaded as a table: ${message}`, 'Unreadable file');
    });
  if (loaded !== sections.length)
    throw new Error(`A document's ${sections.length} sections loaded as ${loaded} rows`);
  return { csv: null, columns: [...DOCUMENT_COLUMNS], rowCount: sections.length };
};
