/** The document kinds this engine converts to markdown sections. */
export const documentKinds = ['pdf', 'docx', 'html', 'md', 'txt'] as const;
export type DocumentKind = (typeof documentKinds)[number];

export const isDocumentKind = (format: string): format is DocumentKind =>
  (documentKinds as readonly string[]).includes(format);

/**
 * One row of a converted document: a PDF page, or a part of the text under one heading (DOCX,
 * HTML, Markdown), or a block of paragraphs (plain text). Numbered from 1 in document order.
 */
export type DocumentSection = { section: number; title: string | null; content: string };

/** What one conversion may cost; each passed limit is refused with a 400 naming its setting. */
export type DocumentLimits = {
  /** Pages a PDF may have (DOCUMENT_MAX_PAGES). */
  maxPages: number;
  /** Sections a converted document may have (DOCUMENT_MAX_SECTIONS). */
  maxSections: number;
  /** Bytes a DOCX's entries may inflate to, together (DOCUMENT_MAX_UNZIPPED_BYTES). */
  maxUnzippedBytes: number;
  /** Element nesting an HTML (or a DOCX's HTML) may have (DOCUMENT_MAX_DEPTH). */
  maxDepth: number;
  /** Time one conversion may take before it is stopped (DOCUMENT_TIMEOUT_MS). */
  timeoutMs: number;
  /** Heap the conversion's worker thread may use, in MiB (DOCUMENT_MAX_MEMORY_MB). */
  maxMemoryMb: number;
};
