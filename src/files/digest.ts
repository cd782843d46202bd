import crypto from 'node:crypto';
import { Transform } from 'node:stream';

/**
 * A stream stage that hashes (sha256) the bytes passing through it on their way to disk: the
 * blob's digest without reading the file again (a 1 GB upload was read once more just for it).
 * `digest()` is the hex digest once the stream has ended.
 */
export const sha256Stage = () => {
  const hash = crypto.createHash('sha256');
  let digest: string | undefined;
  const stage = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      digest = hash.digest('hex');
      done();
    },
  });
  return {
    stage,
    digest: () => {
      if (digest === undefined) throw new Error('The stream has not ended: its digest is not known yet');
      return digest;
    },
  };
};
