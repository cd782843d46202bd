import { invalid } from '../../shared/errors';
import { extractInWorker } from './extractor';
import { checkHtmlDepth } from './htmlDepth';
import { markdownSections, pageSections, textSections } from './sections';
import type { DocumentKind, DocumentLimits, DocumentSection } from './types';
import { checkZipBounds } from './zipGuard';

export { documentKindOf } from './kinds';
export { isDocumentKind } from './types';
export type { DocumentKind, DocumentSection } from './types';

/** Text the columns of a table (and every event) can hold: valid UTF-8 without NUL characters. */
const decodeText = (bytes: Uint8Array, kind: DocumentKind) => {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid(`The ${kind} file is not UTF-8 text`, 'Unreadable file');
  }
  if (text.includes('\u0000'))
    throw invalid(`The ${kind} file holds NUL characters: it is not text`, 'Unreadable file');
  return text.replace(/^\uFEFF/, '');
};

/** Parsers may pass control characters through (a PDF's text layer); NUL is the one no column takes. */
const withoutNul = (sections: DocumentSection[]) =>
  sections.map((s) => ({
    ...s,
    title: s.title?.replaceAll('\u0000', '') ?? null,
    content: s.content.replaceAll('\u0000', ''),
  }));

/**
 * A document's bytes as markdown sections: a PDF page by page, a DOCX, an HTML and a Markdown
 * file heading by heading, a plain text in blocks of paragraphs. Bounded by `limits` (each passed
 * limit a 400 naming its setting); a document without any text is refused (a scanned PDF needs
 * OCR, which this engine does not do: no model is downloaded).
 */
export const convertDocument = async (
  bytes: Uint8Array,
  kind: DocumentKind,
  limits: DocumentLimits,
  /** Stops a conversion running in its worker (the caller went away). */
  signal?: AbortSignal,
): Promise<DocumentSection[]> => {
  if (bytes.length === 0) throw invalid('The document is empty', 'Empty file');
  let sections: DocumentSection[];
  switch (kind) {
    case 'md':
      sections = markdownSections(decodeText(bytes, kind), limits);
      break;
    case 'txt':
      sections = textSections(decodeText(bytes, kind), limits);
      break;
    case 'html': {
      const html = decodeText(bytes, kind);
      checkHtmlDepth(html, limits);
      sections = markdownSections(await extractMarkdown('html', html, limits, signal), limits);
      break;
    }
    case 'docx':
      await checkZipBounds(
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
        limits.maxUnzippedBytes,
      );
      sections = markdownSections(await extractMarkdown('docx', bytes, limits, signal), limits);
      break;
    case 'pdf': {
      const extracted = await extractInWorker('pdf', bytes, limits, signal);
      sections = extracted.type === 'pages' ? pageSections(extracted.pages, limits) : [];
      break;
    }
    default: {
      const _exhaustive: never = kind;
      return _exhaustive;
    }
  }
  if (!sections.some((s) => s.content.trim() !== ''))
    throw invalid(
      `The ${kind} document holds no text${kind === 'pdf' ? ' (a scanned PDF needs OCR, which this service does not do)' : ''}`,
      'No text',
    );
  return withoutNul(sections);
};

const extractMarkdown = async (
  kind: 'html' | 'docx',
  input: string | Uint8Array,
  limits: DocumentLimits,
  signal?: AbortSignal,
) => {
  const extracted = await extractInWorker(
    kind,
    typeof input === 'string' ? Buffer.from(input, 'utf8') : input,
    limits,
    signal,
  );
  return extracted.type === 'markdown' ? extracted.markdown : '';
};

/** The whole document as one markdown text (TO_MARKDOWN): its sections in order. */
export const documentMarkdown = (sections: readonly DocumentSection[]) =>
  sections.map((s) => s.content).join('\n\n');
