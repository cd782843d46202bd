import fc from 'fast-check';
import { backoff, ChannelError, retryDelay, splitText } from '../../src/channels';

describe('backoff: exponential with full jitter', () => {
  it('grows by powers of two from baseMs and stops at maxMs', () => {
    const top = () => 0.999999;
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => backoff(n, { jitter: top }))).toEqual([
      999, 1999, 3999, 7999, 15999, 31999, 59999, 59999,
    ]);
    expect(backoff(1000, { jitter: top })).toBe(59999);
    expect(backoff(3, { baseMs: 100, maxMs: 500, jitter: () => 0.5 })).toBe(250);
  });

  it('is uniform from 0: the jitter picks the fraction of the ceiling', () => {
    expect(backoff(2, { jitter: () => 0 })).toBe(0);
    expect(backoff(2, { jitter: () => 0.25 })).toBe(1000);
    const sequence = [0.1, 0.9];
    const next = () => sequence.shift()!;
    expect([backoff(0, { jitter: next }), backoff(0, { jitter: next })]).toEqual([100, 900]);
  });

  it('stays within [0, min(maxMs, baseMs·2^attempt)) for any attempt and jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseMs, maxMs, r) => {
          const delay = backoff(attempt, { baseMs, maxMs, jitter: () => r });
          return (
            Number.isInteger(delay) &&
            delay >= 0 &&
            delay < Math.max(1, Math.min(maxMs, baseMs * 2 ** attempt))
          );
        },
      ),
    );
  });

  it('retryDelay prefers the platform’s Retry-After, and backs off when it gave none (or none ahead)', () => {
    const limited = new ChannelError('slack', 'x', { reason: 'rate_limited', retryAfterMs: 120_000 });
    const down = new ChannelError('slack', 'x', { reason: 'unavailable' });
    const now = new ChannelError('slack', 'x', { reason: 'rate_limited', retryAfterMs: 0 });
    const halfway = (attempt: number) => backoff(attempt, { jitter: () => 0.5 });
    expect(retryDelay(limited, 0, halfway)).toBe(120_000);
    expect(retryDelay(down, 1, halfway)).toBe(1000);
    expect(retryDelay(now, 2, halfway)).toBe(2000);
    expect(retryDelay(new Error('no platform'), 0, halfway)).toBe(500);
  });
});

describe('splitText', () => {
  it('keeps a short text whole and cuts a long one at a line break, then a space, then anywhere', () => {
    expect(splitText('short', 10)).toEqual(['short']);
    expect(splitText('aaaaaa\nbbbb cc', 10)).toEqual(['aaaaaa', 'bbbb cc']);
    // A break in the first half would make a tiny part: the later space wins.
    expect(splitText('aa\nbbbbbb cc', 10)).toEqual(['aa\nbbbbbb', 'cc']);
    expect(splitText('aaaaaa bbbbbb', 10)).toEqual(['aaaaaa', 'bbbbbb']);
    expect(splitText('abcdefghijklmnop', 10)).toEqual(['abcdefghij', 'klmnop']);
  });

  it('never splits a surrogate pair', () => {
    const text = `${'a'.repeat(9)}😀bbb`;
    expect(splitText(text, 10)).toEqual(['a'.repeat(9), '😀bbb']);
  });

  it('parts fit, split no character, and are the text once the dropped separators are put back', () => {
    const isSeparator = (c: string | undefined) => c === ' ' || c === '\n';
    /** Whether the parts, in order, with at most one separator dropped between two, make the text. */
    const rebuilds = (text: string, parts: string[], i = 0, at = 0): boolean => {
      if (!text.startsWith(parts[i]!, at)) return false;
      const end = at + parts[i]!.length;
      if (i === parts.length - 1) return end === text.length;
      return (
        rebuilds(text, parts, i + 1, end) || (isSeparator(text[end]) && rebuilds(text, parts, i + 1, end + 1))
      );
    };
    const brokenPair = (p: string) => /^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p);
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '😀'), maxLength: 200 }),
        fc.integer({ min: 2, max: 40 }),
        (text, max) => {
          const parts = splitText(text, max);
          return parts.every((p) => p.length <= max && !brokenPair(p)) && rebuilds(text, parts);
        },
      ),
    );
  });
});
