import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { OutboundPolicy } from '../http/outbound';
import { DomainError, invalid } from '../shared/errors';
import type { UploadLog } from './uploadLog';
import { sha256Stage } from './digest';

export const tooLarge = (limit: number) =>
  new DomainError(
    'PayloadTooLarge',
    'Payload too large',
    `The file exceeds the upload limit of ${limit} bytes`,
  );

/**
 * Downloads a URL to disk, with the same size limit. Through the outbound policy: each hop of a
 * redirect checked, and the socket connected to the address the check saw (403 for a refused one).
 */
export const receiveUrl = async (
  url: string,
  target: string,
  maxBytes: number,
  log: Pick<UploadLog, 'received'>,
  outbound: Pick<OutboundPolicy, 'get'>,
  signal?: AbortSignal,
) => {
  const res = await outbound.get(url, `File URL ${url}`, signal ? { signal } : {});
  if (res.status < 200 || res.status >= 300) {
    res.body.resume();
    throw invalid(`Fetching ${url} answered HTTP ${res.status}`, 'Invalid URL');
  }
  let size = 0;
  const counted = async function* (body: AsyncIterable<Uint8Array>) {
    for await (const chunk of body) {
      size += chunk.length;
      log.received(chunk.length);
      if (size > maxBytes) throw tooLarge(maxBytes);
      yield chunk;
    }
  };
  // One pipeline: the file's back-pressure, and a failed write (a full disk) or a refusal ends
  // both streams and rejects, rather than an 'error' nobody listens to (which ended the process)
  // or a wait for a 'drain' that never comes. Hashed as it is written (as a multipart upload is):
  // the blob's digest without reading the file again.
  const hashed = sha256Stage();
  await pipeline(res.body, counted, hashed.stage, fs.createWriteStream(target));
  return { originalName: new URL(url).pathname.split('/').pop() || null, sha256: hashed.digest() };
};
