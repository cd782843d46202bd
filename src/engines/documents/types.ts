/** The document kinds this engine converts to markdown sections. */
const documentKinds = ['pdf', 'docx', 'html', 'md', 'txt'] as const;
export type DocumentKind = (typeof documentKinds)[number];

export const isDocumentKind = (format: string): format is DocumentKind =>
  (documentKinds as readonly string[]).includes(format);

/**
 * One row of a converted document: a PDF page, or a part of the text under one heading (DOCX,
 * HTML, Markdown), or a block of paragraphs (plain text). Numbered from 1 in document order.
 */
export type DocumentSection = { section: number; title: string | null; content: string };

/** What one conversion may cost (DOCUMENT_*): configured, so its shape is the configuration's. */
export type { DocumentLimits } from '../../config/settings';
