import { invalid } from '../../shared/errors';
import type { DocumentLimits, DocumentSection } from './types';

/** A plain text's paragraphs are gathered into sections of about this many characters. */
const TEXT_SECTION_CHARS = 4000;

const ATX_HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** More sections than the limit: refused before any of them is kept. */
const tooManySections = (limits: Pick<DocumentLimits, 'maxSections'>) =>
  invalid(
    `The document has more than ${limits.maxSections} sections (DOCUMENT_MAX_SECTIONS)`,
    'Document too large',
  );

/** Numbers the non-empty sections in order, refusing more than the limit. */
const numbered = (
  parts: { title: string | null; content: string }[],
  limits: Pick<DocumentLimits, 'maxSections'>,
): DocumentSection[] => {
  const kept = parts.filter((p) => p.content.trim() !== '' || p.title);
  if (kept.length > limits.maxSections) throw tooManySections(limits);
  return kept.map((p, i) => ({ section: i + 1, title: p.title, content: p.content.trim() }));
};

/**
 * Markdown cut before each heading (`#` to `######`, not inside a fenced code block): each part
 * keeps its heading line, and is titled by it. Text before the first heading is a part without one.
 */
export const markdownSections = (
  markdown: string,
  limits: Pick<DocumentLimits, 'maxSections'>,
): DocumentSection[] => {
  const parts: { title: string | null; lines: string[] }[] = [{ title: null, lines: [] }];
  let fence: string | null = null;
  for (const line of markdown.split(/\r?\n/)) {
    const opened = FENCE.exec(line)?.[1];
    if (opened && (fence === null || opened.startsWith(fence))) fence = fence === null ? opened : null;
    const heading = fence === null ? ATX_HEADING.exec(line) : null;
    if (heading) {
      if (parts.length > limits.maxSections) throw tooManySections(limits);
      parts.push({ title: heading[2] ?? '', lines: [] });
    }
    parts.at(-1)!.lines.push(line);
  }
  return numbered(
    parts.map((p) => ({ title: p.title, content: p.lines.join('\n') })),
    limits,
  );
};

/** Plain text in blocks of whole paragraphs (split at blank lines), each about 4,000 characters. */
export const textSections = (
  text: string,
  limits: Pick<DocumentLimits, 'maxSections'>,
): DocumentSection[] => {
  const parts: { title: null; content: string }[] = [];
  let block = '';
  for (const paragraph of text.split(/\r?\n[ \t]*\r?\n/)) {
    if (paragraph.trim() === '') continue;
    if (block && block.length + paragraph.length > TEXT_SECTION_CHARS) {
      if (parts.length >= limits.maxSections) throw tooManySections(limits);
      parts.push({ title: null, content: block });
      block = '';
    }
    block = block ? `${block}\n\n${paragraph}` : paragraph;
  }
  if (block) parts.push({ title: null, content: block });
  return numbered(parts, limits);
};

/** A PDF's pages, one section each (numbered by page, empty pages kept so numbers stay pages). */
export const pageSections = (
  pages: readonly string[],
  limits: Pick<DocumentLimits, 'maxSections'>,
): DocumentSection[] => {
  if (pages.length > limits.maxSections) throw tooManySections(limits);
  return pages.map((content, i) => ({ section: i + 1, title: null, content: content.trim() }));
};
