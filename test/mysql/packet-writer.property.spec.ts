/**
 * The packet writer's shortcuts write what the plain path writes: an integer cell's digits made in
 * place equal its text, the digit count equals the text's length (the answer-size limit counts
 * with it), and bytes handed over by `take` without a copy never change afterwards.
 * Beside each, a kill check: a digit count that leaves out the minus sign, and a `take` that hands
 * over a view of the buffer it keeps writing into (small pieces not copied), are caught at the
 * count `npm test` runs.
 */
import fc from 'fast-check';
import { PacketWriter } from '../../src/mysql/protocol/packetWriter';
import { integerDigits } from '../../src/shared/integerDigits';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const safeInteger = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.maxSafeInteger(),
  fc.integer().map((n) => -n),
  fc.constantFrom(0, -0, 9, 10, -10, 99, 100, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  // Where the digits change from floating-point to 32-bit integer arithmetic.
  fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, 2 ** 31 * 100 + 99),
  fc.maxSafeNat().map((n) => -n),
);

/** The integer cell written in place as its text is, counted with `digits`. */
const writtenAsText = (n: number, digits: (n: number) => number) => {
  const inPlace = new PacketWriter(8).lenencInteger(n).take();
  const asText = new PacketWriter(8).lenencString(String(n)).take();
  expect(inPlace).toEqual(asText);
  expect(digits(n)).toBe(String(n).length);
  expect(digits(n)).toBe(JSON.stringify(n).length);
};

/** A digit count that leaves out the minus sign (the kill check's bug). */
const digitsWithoutSign = (n: number) => integerDigits(Math.abs(n));

/** A writer whose `take` hands over a view of its own buffer and keeps writing into it (the kill check's bug). */
class TakesWithoutCopy extends PacketWriter {
  override take(): Buffer {
    const own = this as unknown as { buf: Buffer; pos: number };
    const out = own.buf.subarray(0, own.pos);
    own.pos = 0;
    return out;
  }
}

// Payloads of any size up to 9,000 bytes, each filled with a byte of its own: pieces on both
// sides of the size past which `take` hands its buffer over; now and then one whose length
// needs the header's third byte.
const length = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 9000 }), weight: 20 },
  { arbitrary: fc.integer({ min: 65_000, max: 140_000 }), weight: 1 },
);
const payload = fc
  .record({ length, fill: fc.integer({ min: 0, max: 255 }) })
  .map(({ length, fill }) => Buffer.alloc(length, fill));
const piece = fc.record({ packets: fc.array(payload, { maxLength: 12 }) });
const pieces = fc.array(piece, { minLength: 1, maxLength: 8 });

/** Every piece `writer` handed over is, after everything written since, what it was when taken. */
const takenUnchanged = (pieces: { packets: Buffer[] }[], writer: PacketWriter) => {
  const taken: { bytes: Buffer; expected: Buffer }[] = [];
  let sequence = 0;
  for (const { packets } of pieces) {
    const expected: Buffer[] = [];
    for (const payload of packets) {
      writer.begin().bytes(payload).end();
      const header = Buffer.alloc(4);
      header.writeUIntLE(payload.length, 0, 3);
      header[3] = sequence++ & 0xff;
      expected.push(header, Buffer.from(payload));
    }
    const bytes = writer.take();
    taken.push({ bytes, expected: Buffer.concat(expected) });
  }
  // Every piece as it was when taken, after everything written since.
  for (const { bytes, expected } of taken) expect(bytes.equals(expected)).toBe(true);
  expect(writer.size).toBe(0);
};

describe('the packet writer', () => {
  it('writes an integer cell as the length-encoded string of its text', () => {
    fc.assert(
      fc.property(safeInteger, (n) => writtenAsText(n, integerDigits)),
      { seed: SEED, numRuns: propertyRuns(2000) },
    );
  });

  it('kill check: a digit count that leaves out the minus sign is caught', () => {
    expectCaught(
      fc.property(safeInteger, (n) => writtenAsText(n, digitsWithoutSign)),
      { seed: SEED, numRuns: propertyRuns(2000) },
    );
  });

  it('hands over bytes that later writes never change, small (copied) or large (handed over)', () => {
    fc.assert(
      fc.property(pieces, (drawn) => takenUnchanged(drawn, new PacketWriter(1024))),
      { seed: SEED, numRuns: propertyRuns(150) },
    );
  });

  it('kill check: a take that hands over a view of the buffer it keeps writing into is caught', () => {
    expectCaught(
      fc.property(pieces, (drawn) => takenUnchanged(drawn, new TakesWithoutCopy(1024))),
      { seed: SEED, numRuns: propertyRuns(150) },
    );
  });
});
