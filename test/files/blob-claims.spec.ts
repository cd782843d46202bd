import type { FileBlobClaimed, FileBlobReleased, FileBlobUnclaimed } from '../../events';
import { decideBlobClaim, type BlobClaimCommand } from '../../src/files/decider';
import { blobClaimsAggregate, type BlobClaims } from '../../src/files/state';
import { deciderSpec } from '../support/decider';

const now = new Date('2026-02-03T04:05:06.789Z');
const digest = 'a'.repeat(64);
const spec = deciderSpec<BlobClaims, BlobClaimCommand>({ ...blobClaimsAggregate, decide: decideBlobClaim });

const claimed = (file: string): FileBlobClaimed => ({
  type: 'FileBlobClaimed',
  data: { digest, file, claimedAt: now.toISOString() },
});
const unclaimed = (file: string): FileBlobUnclaimed => ({
  type: 'FileBlobUnclaimed',
  data: { digest, file, unclaimedAt: now.toISOString() },
});
const released: FileBlobReleased = {
  type: 'FileBlobReleased',
  data: { digest, releasedAt: now.toISOString() },
};
const command = (
  type: BlobClaimCommand['type'],
  file: string,
  legacyUsers: string[] = [],
): BlobClaimCommand => ({ type, digest, file, legacyUsers, now });

describe('blob claims decider', () => {
  it('records a first claim', () =>
    spec
      .given([])
      .when(command('ClaimBlob', 'x'))
      .then([claimed('x')]));

  it('records nothing when the file claims the blob already', () =>
    spec
      .given([claimed('x')])
      .when(command('ClaimBlob', 'x'))
      .then([]));

  it('keeps the bytes while another file claims them', () =>
    spec
      .given([claimed('x'), claimed('y')])
      .when(command('UnclaimBlob', 'x'))
      .then([unclaimed('x')]));

  it('releases the bytes with the last claim', () =>
    spec
      .given([claimed('x')])
      .when(command('UnclaimBlob', 'x'))
      .then([unclaimed('x'), released]));

  it('ignores a file that holds no claim once claims are recorded (the read model is not asked)', () =>
    spec
      .given([claimed('y')])
      .when(command('UnclaimBlob', 'x', ['x', 'z']))
      .then([]));

  it('adopts the users of a blob uploaded before claims were recorded', () =>
    spec
      .given([])
      .when(command('ClaimBlob', 'new', ['old']))
      .then([claimed('old'), claimed('new')]));

  it('keeps a blob an older file still uses when that older file is not the one deleted', () =>
    spec
      .given([])
      .when(command('UnclaimBlob', 'deleted', ['still_live']))
      .then([claimed('still_live')]));

  it('releases a blob of an older file no other file uses', () =>
    spec.given([]).when(command('UnclaimBlob', 'deleted')).then([released]));

  it('after a release, claims again from nothing (the uploader stores the bytes again)', () =>
    spec
      .given([claimed('x'), unclaimed('x'), released])
      .when(command('ClaimBlob', 'y', ['stale_row']))
      .then([claimed('y')]));
});
