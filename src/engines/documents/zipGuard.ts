import zlib from 'node:zlib';
import { invalid } from '../../shared/errors';

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** A DOCX has a few dozen parts; a zip of many thousands is a zip of something else (or a bomb). */
const MAX_ENTRIES = 10_000;

/**
 * Bytes an entry inflates to, counted as it inflates and kept nowhere, stopped once past `limit`.
 * Inflated on libuv's threads (a quarter of a GiB inflating does not hold up the event loop) in
 * chunks of 256 KiB: inflating to a buffer capped at the limit held up to 256 MiB per upload, and
 * zlib's 16 KiB chunks made a bomb's refusal cost 0.3-0.5 s of CPU.
 */
export const inflatedSize = (data: Buffer, limit: number) =>
  new Promise<number>((resolve, reject) => {
    const inflater = zlib.createInflateRaw({ chunkSize: 256 * 1024 });
    let size = 0;
    inflater.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        inflater.destroy();
        resolve(size);
      }
    });
    inflater.on('end', () => resolve(size));
    inflater.on('error', reject);
    inflater.end(data);
  });

const notAZip = (why: string) => invalid(`The DOCX is not a readable zip archive: ${why}`, 'Unreadable file');

const tooBig = (limit: number) =>
  invalid(
    `The DOCX inflates to more than ${limit} bytes (DOCUMENT_MAX_UNZIPPED_BYTES); nothing was inflated past that`,
    'Document too large',
  );

/** The end of central directory record: where the directory is and how many entries it lists. */
const endOfDirectory = (zip: Buffer) => {
  // The record is 22 bytes plus a comment of at most 65,535: searched backwards from the end.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--)
    if (zip.readUInt32LE(at) === EOCD)
      return { entries: zip.readUInt16LE(at + 10), offset: zip.readUInt32LE(at + 16) };
  throw notAZip('no end of central directory');
};

/**
 * Checks a DOCX's zip before mammoth (through jszip, which inflates whole entries into memory and
 * trusts nothing but its own reading) sees it: every entry's declared size counted against the
 * limit, and then every entry inflated here with its output capped at what is left of the limit,
 * so an entry lying about its size (a zip bomb declares a few bytes and inflates to gigabytes)
 * stops at the limit instead of filling memory. Entries are read as jszip reads them: from the
 * central directory, their data after their local header.
 */
export const checkZipBounds = async (zip: Buffer, maxUnzippedBytes: number) => {
  if (zip.length < 22) throw notAZip('too short');
  const { entries, offset } = endOfDirectory(zip);
  if (entries > MAX_ENTRIES) throw notAZip(`it lists ${entries} entries (at most ${MAX_ENTRIES})`);
  let at = offset;
  let declared = 0;
  const located: { method: number; start: number; compressed: number }[] = [];
  for (let i = 0; i < entries; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== CENTRAL)
      throw notAZip('a damaged central directory');
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const local = zip.readUInt32LE(at + 42);
    if (flags & 1) throw notAZip('an entry is encrypted');
    if (method !== 0 && method !== 8) throw notAZip(`an entry is compressed by method ${method}`);
    if (size === 0xffffffff || compressed === 0xffffffff) throw tooBig(maxUnzippedBytes);
    declared += size;
    if (declared > maxUnzippedBytes) throw tooBig(maxUnzippedBytes);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== LOCAL)
      throw notAZip('an entry has no local header');
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    if (start + compressed > zip.length) throw notAZip('an entry runs past the end of the file');
    located.push({ method, start, compressed });
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  let inflated = 0;
  for (const entry of located) {
    const data = zip.subarray(entry.start, entry.start + entry.compressed);
    if (entry.method === 0) {
      inflated += data.length;
    } else {
      const left = maxUnzippedBytes - inflated;
      inflated += await inflatedSize(data, left).catch(() => {
        throw notAZip('an entry does not inflate');
      });
    }
    if (inflated > maxUnzippedBytes) throw tooBig(maxUnzippedBytes);
  }
};
