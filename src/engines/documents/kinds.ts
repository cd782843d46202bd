import type { DocumentKind } from './types';
import { ownEntry } from '../../shared/ownEntry';

const BY_EXTENSION: Record<string, DocumentKind> = {
  pdf: 'pdf',
  docx: 'docx',
  html: 'html',
  htm: 'html',
  md: 'md',
  markdown: 'md',
  txt: 'txt',
  text: 'txt',
};

/**
 * The document kind of an upload, from its name's extension, else from its first bytes (a PDF's
 * `%PDF-`, an HTML's doctype or `<html`); null: not a document (a table format, or unknown). A zip
 * without a `.docx` name is not taken for a DOCX: other formats are zips too.
 */
export const documentKindOf = (originalName: string | null, head: Buffer): DocumentKind | null => {
  const ext = originalName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  const byExtension = ext === undefined ? undefined : ownEntry(BY_EXTENSION, ext);
  if (byExtension) return byExtension;
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (text.startsWith('<!doctype html') || text.startsWith('<html')) return 'html';
  return null;
};
