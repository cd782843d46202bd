/**
 * A document's text is cut into chunks (src/engines/search/chunker.ts): they cover every character
 * in order, keep to the size, overlap at most as asked, and never split a character. Beside it, a
 * kill check: a chunker not given the knowledge base's settings (MindsDB's defaults, 1,000 and 200,
 * cut instead) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { chunkText } from '../../src/engines/search/chunker';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Chunker = typeof chunkText;

/** The settings left behind: every text cut with the defaults (the kill check's bug). */
const settingsNotPassed: Chunker = (text) => chunkText(text);

const drawn = [
  fc.oneof(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.lorem({ maxCount: 60 })),
  fc.integer({ min: 1, max: 120 }),
  fc.integer({ min: 0, max: 130 }),
] as const;

/** The chunks `chunk` cuts from `text` keep every promise above. */
const chunksAsPromised = (chunk: Chunker, text: string, chunkSize: number, chunkOverlap: number) => {
  const chunks = chunk(text, { chunkSize, chunkOverlap });
  let covered = 0;
  for (const [i, c] of chunks.entries()) {
    expect(c.content).toBe(text.slice(c.start, c.end));
    expect(c.end - c.start).toBeLessThanOrEqual(Math.max(chunkSize, 2));
    expect(text.slice(covered, Math.max(covered, c.start)).trim()).toBe(''); // only blank stretches are left out
    if (i > 0) {
      expect(c.start).toBeGreaterThan(chunks[i - 1]!.start);
      expect(chunks[i - 1]!.end - c.start).toBeLessThanOrEqual(Math.min(chunkOverlap, chunkSize - 1) + 1);
    }
    expect(loneSurrogate.test(c.content) && !loneSurrogate.test(text)).toBe(false);
    covered = Math.max(covered, c.end);
  }
  if (text.trim() !== '') expect(text.slice(covered).trim()).toBe('');
  expect(chunk(text, { chunkSize, chunkOverlap })).toEqual(chunks);
};

describe('chunking', () => {
  it('given any text and settings, chunks cover every character in order, keep to the size, overlap at most as asked, and never split a character', () => {
    fc.assert(
      fc.property(...drawn, (text, chunkSize, chunkOverlap) =>
        chunksAsPromised(chunkText, text, chunkSize, chunkOverlap),
      ),
      { seed: propertySeed(), numRuns: propertyRuns(400) },
    );
  });

  it('kill check: the settings not passed on (the defaults cut instead) are caught', () => {
    expectCaught(
      fc.property(...drawn, (text, chunkSize, chunkOverlap) =>
        chunksAsPromised(settingsNotPassed, text, chunkSize, chunkOverlap),
      ),
      { seed: propertySeed(), numRuns: propertyRuns(400) },
    );
  });
});
