import { z } from 'zod';
import { defineEvent, type EventOf } from './contract';

/**
 * The audit ledger's signed tree heads, on the stream `ledger-checkpoints`: the log had `treeSize`
 * events (in the order it is tailed), their RFC 6962 tree's root was `rootHash` (base64), and the
 * service signed that (`note`, a c2sp.org signed note with an Ed25519 signature). The checkpoint
 * event is itself a leaf of the tree after it.
 */
export const LedgerCheckpointSigned = defineEvent(
  'LedgerCheckpointSigned',
  z.object({
    treeSize: z.number().int().min(1),
    rootHash: z.string().min(1),
    /** Global position of the last leaf it covers, as a decimal string. */
    lastPosition: z.string().regex(/^[0-9]+$/),
    note: z.string().min(1).max(8192),
    /** Fingerprint of the signing key (hex SHA-256 of its raw bytes). */
    keyFingerprint: z.string().min(1),
    signedAt: z.iso.datetime(),
  }),
);

export type LedgerCheckpointSigned = EventOf<typeof LedgerCheckpointSigned>;
export type LedgerEvent = LedgerCheckpointSigned;
export const ledgerContracts = [LedgerCheckpointSigned] as const;
