import fc from 'fast-check';

/** Full Unicode with lone surrogates and NUL, quotes and escapes, empty and huge. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
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
      .array(
        fc.constantFrom(
          '\ud800',
          '\udfff',
          '\ud83d\ude00',
          '\u0000',
          '\uFFFF',
          '\u202E',
          "'",
          '"',
          '\\',
          '`',
          ';',
          '.',
          'x',
          '',
        ),
        { minLength: 1, maxLength: 6 },
      )
      .map((parts) => parts.join('')),
  },
  { weight: 1, arbitrary: fc.constantFrom('', 'a'.repeat(70_000), `q${'\u0301'.repeat(5000)}`) },
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
