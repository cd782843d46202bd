import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const ledgerCheckpointResource: ResourceDeclaration = { kind: 'ledgerCheckpoint' };
const dataKeysResource: ResourceDeclaration = { kind: 'dataKeys' };

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
  { resource: ledgerCheckpointResource },
);

/**
 * A resource's secrets forgotten (crypto-shredding), on the stream `data-keys-<resource>`: its data
 * keys are destroyed right after this is appended, so every secret sealed under them, in every copy
 * of the log, is unreadable from then on. No key material: only which keys, of which resource (the
 * hashed prefix of their ids), and why.
 */
export const DataKeysDestroyed = defineEvent(
  'DataKeysDestroyed',
  z.object({
    resource: z.string().min(1).max(200),
    keyIds: z.array(z.string().min(1).max(128)).min(1).max(1000),
    reason: z.string().min(1).max(500),
    destroyedAt: z.iso.datetime(),
  }),
  { resource: dataKeysResource },
);

export type LedgerCheckpointSigned = EventOf<typeof LedgerCheckpointSigned>;
export type DataKeysDestroyed = EventOf<typeof DataKeysDestroyed>;
export type LedgerEvent = LedgerCheckpointSigned | DataKeysDestroyed;
export const ledgerContracts = [LedgerCheckpointSigned, DataKeysDestroyed] as const;
