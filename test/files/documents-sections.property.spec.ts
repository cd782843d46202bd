/**
 * Property (a fresh seed each run, bounded runs): cutting a document into sections loses and
 * invents nothing. Every non-blank line of a Markdown text is in exactly one section, in order,
 * whatever its headings, fences and blank lines; every paragraph of a plain text likewise; and
 * sections are numbered 1, 2, 3… Beside it, the kill check: a splitter that drops the text before
 * the first heading (a bug a heading-only splitter has) is caught by the same property.
 */
import fc from 'fast-check';
import { markdownSections, textSections } from '../../src/engines/documents/sections';
import type { DocumentSection } from '../../src/engines/documents/types';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const LIMITS = { maxSections: 100_000 };

const line = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('# Title', '## Sub', '###### Deep', '```', '~~~', '    # indented code', '', '   ', 'text'),
  fc.string({ maxLength: 12 }).map((s) => `# ${s}`),
);
const markdown = fc.array(line, { maxLength: 40 }).map((lines) => lines.join('\n'));

const nonBlankLines = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim());

const losesNothing = (split: (md: string) => DocumentSection[]) =>
  fc.property(markdown, (md) => {
    const sections = split(md);
    expect(sections.map((s) => s.section)).toEqual(sections.map((_, i) => i + 1));
    expect(sections.flatMap((s) => nonBlankLines(s.content))).toEqual(nonBlankLines(md));
  });

describe('document sections', () => {
  it('a Markdown text cut at its headings keeps every line once, in order', () => {
    fc.assert(
      losesNothing((md) => markdownSections(md, LIMITS)),
      { seed: SEED, numRuns: propertyRuns(500) },
    );
  });

  it('a plain text in blocks of paragraphs keeps every paragraph once, in order', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 3000 }), { maxLength: 20 }), (paragraphs) => {
        const text = paragraphs.join('\n\n');
        const sections = textSections(text, LIMITS);
        expect(sections.map((s) => s.section)).toEqual(sections.map((_, i) => i + 1));
        expect(sections.flatMap((s) => nonBlankLines(s.content))).toEqual(nonBlankLines(text));
      }),
      { seed: SEED, numRuns: propertyRuns(200) },
    );
  });

  describe('kill check', () => {
    it('the property catches a splitter that drops the text before the first heading', () => {
      const dropsPreamble = (md: string) =>
        markdownSections(md, LIMITS)
          .filter((s) => s.title !== null)
          .map((s, i) => ({ ...s, section: i + 1 }));
      const outcome = fc.check(losesNothing(dropsPreamble), { seed: SEED, numRuns: propertyRuns(500) });
      expect(outcome.failed).toBe(true);
    });
  });

  it('refuses more sections than DOCUMENT_MAX_SECTIONS, naming it', () => {
    expect(() => markdownSections('# a\n# b\n# c', { maxSections: 2 })).toThrow(
      /more than 2 sections \(DOCUMENT_MAX_SECTIONS\)/,
    );
    expect(() =>
      textSections(`${'x'.repeat(4000)}\n\n${'y'.repeat(4000)}\n\n${'z'.repeat(4000)}`, { maxSections: 2 }),
    ).toThrow(/DOCUMENT_MAX_SECTIONS/);
  });
});
