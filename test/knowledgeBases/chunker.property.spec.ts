import fc from 'fast-check';
import { chunkText } from '../../src/engines/search/chunker';
import { propertyRuns, propertySeed } from '../support/seed';

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('chunking', () => {
  it('given any text and settings, chunks cover every character in order, keep to the size, overlap at most as asked, and never split a character', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.lorem({ maxCount: 60 })),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 130 }),
        (text, chunkSize, chunkOverlap) => {
          const chunks = chunkText(text, { chunkSize, chunkOverlap });
          let covered = 0;
          for (const [i, c] of chunks.entries()) {
            expect(c.content).toBe(text.slice(c.start, c.end));
            expect(c.end - c.start).toBeLessThanOrEqual(Math.max(chunkSize, 2));
            expect(text.slice(covered, Math.max(covered, c.start)).trim()).toBe(''); // only blank stretches are left out
            if (i > 0) {
              expect(c.start).toBeGreaterThan(chunks[i - 1]!.start);
              expect(chunks[i - 1]!.end - c.start).toBeLessThanOrEqual(
                Math.min(chunkOverlap, chunkSize - 1) + 1,
              );
            }
            expect(loneSurrogate.test(c.content) && !loneSurrogate.test(text)).toBe(false);
            covered = Math.max(covered, c.end);
          }
          if (text.trim() !== '') expect(text.slice(covered).trim()).toBe('');
          expect(chunkText(text, { chunkSize, chunkOverlap })).toEqual(chunks);
        },
      ),
      { seed: propertySeed(), numRuns: propertyRuns(400) },
    );
  });
});
