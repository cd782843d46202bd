import crypto from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson, eventLeafHash, leafBytes, leafText, type RecordedEventLike } from '../../src/ledger';

const event = (
  over: { type?: string; data?: unknown; meta?: Partial<RecordedEventLike['meta']> } = {},
): RecordedEventLike => ({
  type: over.type ?? 'SkillCreated',
  data: 'data' in over ? over.data : { name: 'search', params: { k: 'v' } },
  meta: {
    position: 42n,
    stream: 'skill-1',
    streamPosition: 1n,
    eventId: '0b9c3c2e-5a4a-4c7e-9d0f-7c1f9a3e2b11',
    recordedAt: '2025-01-02T03:04:05.678Z',
    schemaVersion: 1,
    ...over.meta,
  },
});

describe('canonical JSON (RFC 8785 JCS)', () => {
  it('given the RFC 8785 §3.2.3 property-sorting example, then keys come out in UTF-16 code unit order', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the keys off the text: parsing would reorder them (integer-like keys first).
    const keys = [...canonicalJson(input)!.matchAll(/"([^"]*)":/g)].map(
      (m) => JSON.parse(`"${m[1]}"`) as string,
    );
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
  });

  it('given numbers, then they are written as ECMAScript writes them (RFC 8785 §3.2.2.3 examples)', () => {
    // The RFC's first example has more digits than a double holds: it reads as the nearest double.
    expect(
      canonicalJson([Number('333333333.33333329'), 1e30, 4.5, 0.002, 1e-27, -0, 1.0, 1e21, 2 ** 53]),
    ).toBe('[333333333.3333333,1e+30,4.5,0.002,1e-27,0,1,1e+21,9007199254740992]');
  });

  it('given strings, then only quotes, backslashes and control characters are escaped', () => {
    expect(canonicalJson({ s: 'a"b\\c\n\t\u0001€😀\u007f' })).toBe(
      '{"s":"a\\"b\\\\c\\n\\t\\u0001€😀\u007f"}',
    );
  });

  it('given any UTF-16 string, lone surrogates included, then it is written exactly as JSON.stringify writes it', () => {
    expect(canonicalJson('\ud800x\udfff')).toBe('"\\ud800x\\udfff"');
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.string({ unit: codeUnit, maxLength: 40 }), (text) => {
        expect(canonicalJson(text)).toBe(JSON.stringify(text));
        expect(canonicalJson({ [text]: text })).toBe(JSON.stringify({ [text]: text }));
      }),
      { seed: 8785, numRuns: 500 },
    );
  });

  it('given values JSON cannot hold, then they become what JSON.stringify stores, and bigints decimal strings', () => {
    expect(
      canonicalJson({
        gone: undefined,
        fn: () => 1,
        list: [undefined, NaN, Infinity],
        big: 12345678901234567890n,
        at: new Date(Date.UTC(2025, 0, 2)),
      }),
    ).toBe('{"at":"2025-01-02T00:00:00.000Z","big":"12345678901234567890","list":[null,null,null]}');
    expect(canonicalJson(undefined)).toBeUndefined();
  });

  it('given any JSON value, then its canonical form parses back to the same value and ignores key order', () => {
    const shuffled = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(shuffled);
      if (value !== null && typeof value === 'object')
        return Object.fromEntries(
          Object.entries(value)
            .reverse()
            .map(([k, v]) => [k, shuffled(v)]),
        );
      return value;
    };
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const canonical = canonicalJson(value)!;
        expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(shuffled(value))).toBe(canonical);
        expect(canonicalJson(JSON.parse(canonical))).toBe(canonical);
      }),
      { seed: 20250101, numRuns: 300 },
    );
  });
});

describe('the leaf of an event', () => {
  it('given an event, then its leaf is the canonical JSON of type, stream, position, data and metadata', () => {
    expect(leafText(event())).toBe(
      '{"data":{"name":"search","params":{"k":"v"}},' +
        '"metadata":{"eventId":"0b9c3c2e-5a4a-4c7e-9d0f-7c1f9a3e2b11","recordedAt":"2025-01-02T03:04:05.678Z",' +
        '"schemaVersion":1,"streamPosition":"1"},"position":"42","stream":"skill-1","type":"SkillCreated"}',
    );
  });

  it('given any event, then the leaf equals canonicalJson of its fields and hashes as SHA-256(0x00 || UTF-8 leaf)', () => {
    fc.assert(
      fc.property(
        fc.record({
          type: fc.string({ minLength: 1 }),
          stream: fc.string({ unit: 'binary' }),
          position: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
          streamPosition: fc.option(fc.bigInt({ min: 1n, max: 2n ** 40n }), { nil: undefined }),
          eventId: fc.option(fc.uuid(), { nil: undefined }),
          data: fc.jsonValue({ maxDepth: 3 }),
        }),
        ({ type, stream, position, streamPosition, eventId, data }) => {
          const e: RecordedEventLike = { type, data, meta: { position, stream, streamPosition, eventId } };
          const generic = canonicalJson({
            type,
            stream,
            position: position.toString(),
            data,
            metadata: { streamPosition, eventId },
          });
          expect(leafText(e)).toBe(generic);
          const expected = crypto
            .createHash('sha256')
            .update(Buffer.concat([Buffer.from([0]), Buffer.from(generic!, 'utf8')]))
            .digest();
          expect(eventLeafHash(e).equals(expected)).toBe(true);
          expect(leafBytes(e).toString('utf8')).toBe(generic);
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it('given two events differing in any one field, then their leaf hashes differ', () => {
    const base = eventLeafHash(event());
    const variants = [
      event({ type: 'SkillUpdated' }),
      event({ data: { name: 'search', params: { k: 'w' } } }),
      event({ data: undefined }),
      event({ meta: { position: 43n } }),
      event({ meta: { stream: 'skill-2' } }),
      event({ meta: { streamPosition: 2n } }),
      event({ meta: { eventId: 'other' } }),
      event({ meta: { recordedAt: '2025-01-02T03:04:05.679Z' } }),
      event({ meta: { schemaVersion: 2 } }),
    ];
    for (const variant of variants) expect(eventLeafHash(variant).equals(base)).toBe(false);
  });
});
