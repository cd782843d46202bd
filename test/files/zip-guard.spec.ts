/**
 * The DOCX zip guard (src/engines/documents/zipGuard.ts) counts what an entry inflates to and stops
 * inflating once past the limit: a bomb's refusal neither inflates it whole nor holds what it
 * inflated. Given an entry of 1 GiB of spaces deflated to about a MiB, when its size is counted
 * against a limit of 1 MiB, then the count stops within a chunk (256 KiB) past the limit.
 */
import zlib from 'node:zlib';
import { checkZipBounds, inflatedSize } from '../../src/engines/documents/zipGuard';
import { docxBomb } from './documents-fixtures';

const MiB = 1024 * 1024;

/** 1 GiB of spaces, raw-deflated: 16 MiB blocks (full flushes) repeated, then an empty final block. */
const deflatedGiB = () => {
  const block = zlib.deflateRawSync(Buffer.alloc(16 * MiB, 0x20), {
    finishFlush: zlib.constants.Z_FULL_FLUSH,
  });
  return Buffer.concat([...Array.from({ length: 64 }, () => block), Buffer.from([0x03, 0x00])]);
};

describe('the DOCX zip guard', () => {
  it('counts an entry only until it passes the limit, not to its end', async () => {
    const limit = MiB + Math.floor(Math.random() * MiB);
    const counted = await inflatedSize(deflatedGiB(), limit);
    expect(counted).toBeGreaterThan(limit);
    expect(counted).toBeLessThanOrEqual(limit + 256 * 1024);
  });

  it('counts a whole entry under the limit exactly', async () => {
    const size = 1 + Math.floor(Math.random() * 3 * MiB);
    expect(await inflatedSize(zlib.deflateRawSync(Buffer.alloc(size, 0x41)), 4 * MiB)).toBe(size);
  });

  it('refuses a bomb that lies about its size, naming the limit, and an entry that does not inflate', async () => {
    await expect(checkZipBounds(docxBomb(1, 'lying'), 8 * MiB)).rejects.toMatchObject({
      message: expect.stringContaining(
        `inflates to more than ${8 * MiB} bytes (DOCUMENT_MAX_UNZIPPED_BYTES)`,
      ),
    });
    await expect(inflatedSize(Buffer.from('not deflate data at all, \u0000\u00ff'), MiB)).rejects.toThrow();
  });
});
