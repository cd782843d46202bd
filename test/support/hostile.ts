import fc from 'fast-check';

/** Code units and shapes that broke readers before: surrogates, NUL, noncharacters, RTL, combining, quotes. */
const HOSTILE_PIECES = [
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '\u0000',
  '\uFFFE',
  '\uFFFF',
  '\u200F',
  '\u202E',
  '\u0301\u0301\u0301\u0301',
  '\u{10FFFF}',
  "'",
  '"',
  '\\',
  '`',
  ';',
  '',
];

/**
 * Strings a client may send: any code units, lone surrogates alone, the hostile pieces joined with
 * the field's own (`pieces`: template braces, SQL words, path parts), empty and huge (`hugeLength`).
 */
export const hostileStrings = (pieces: readonly string[] = [], hugeLength = 70_000): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    {
      weight: 2,
      arbitrary: fc.string({
        unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
        minLength: 1,
        maxLength: 3,
      }),
    },
    {
      weight: 3,
      arbitrary: fc
        .array(fc.constantFrom(...HOSTILE_PIECES, ...pieces), { minLength: 1, maxLength: 6 })
        .map((parts) => parts.join('')),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', 'a'.repeat(hugeLength), `${pieces[0] ?? 'x'}${'\u0301'.repeat(5000)}`),
    },
  );

/** Full Unicode with lone surrogates and NUL, quotes and escapes, empty and huge. */
export const hostileString: fc.Arbitrary<string> = hostileStrings(['.', 'x', 'name']);

/** Half the time with a lone surrogate put in somewhere: the value that stopped every write. */
export const withLoneSurrogate = (strings: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    strings,
    fc.tuple(strings, fc.nat(), fc.integer({ min: 0xd800, max: 0xdfff })).map(([s, at, unit]) => {
      const i = Math.min(at, s.length);
      return `${s.slice(0, i)}${String.fromCharCode(unit)}${s.slice(i)}`;
    }),
  );

/** A JSON value nested `depth` levels. */
export const deepJson = (depth: number): unknown => (depth === 0 ? 'x' : { k: deepJson(depth - 1) });

/** Any JSON value, hostile strings in keys and values, sometimes deep. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 400 }).map(deepJson) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1e308, 1.5, [], {}) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
);

/** A SQL string literal of `s` (MySQL's escapes). */
export const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
/** A backticked identifier of `s`. */
export const ident = (s: string) => `\`${s.replace(/`/g, '``')}\``;
export const clip = (text: string) => (text.length <= 200 ? text : `${text.slice(0, 100)}…(${text.length})`);

/**
 * A path segment carrying `s` byte by byte (percent-encoded UTF-8); `raw` also sends bytes no UTF-8
 * text has (a lone surrogate's CESU-8 form, a NUL), as a client may.
 */
export const pathSegment = (s: string, raw = false) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('') +
  (raw ? '%ED%A0%80%00' : '');

/** The read model reaches the log's head (within 10 s): nothing is stuck behind what was sent. */
export const readyAtHead = async (t: { http: { get: (path: string) => PromiseLike<{ body: unknown }> } }) => {
  let last: { position: string; log_head: string } | undefined;
  for (let i = 0; i < 200; i++) {
    last = (await t.http.get('/api/ready')).body as { position: string; log_head: string };
    if (last.position === last.log_head) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
};
