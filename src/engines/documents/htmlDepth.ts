import { invalid } from '../../shared/errors';
import type { DocumentLimits } from './types';

/** Elements without content, and elements HTML closes by itself (the next one opens): never nesting. */
const NOT_NESTING = new Set(
  'area base br col embed hr img input link meta source track wbr p li dt dd tr td th option optgroup thead tbody tfoot colgroup rp rt'.split(
    ' ',
  ),
);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(\/?)>/g;

/**
 * Refuses an HTML whose elements open deeper than the limit, by one linear scan of its tags
 * before any parser sees it: the HTML parser takes quadratic time on thousands of unclosed
 * elements, and turning a deep tree into markdown recurses once per level.
 */
export const checkHtmlDepth = (html: string, limits: Pick<DocumentLimits, 'maxDepth'>) => {
  let depth = 0;
  for (const [, closing, name, selfClosing] of html.matchAll(TAG)) {
    if (selfClosing || NOT_NESTING.has(name!.toLowerCase())) continue;
    depth = closing ? Math.max(0, depth - 1) : depth + 1;
    if (depth > limits.maxDepth)
      throw invalid(
        `The HTML's elements are nested more than ${limits.maxDepth} deep (DOCUMENT_MAX_DEPTH)`,
        'Document too large',
      );
  }
};
