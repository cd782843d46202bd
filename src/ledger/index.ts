// The audit ledger's cryptographic core: see README.md for the formats an auditor can check by hand.
export { canonicalJson, eventLeafHash, leafBytes, leafText, type RecordedEventLike } from './canonical';
export { signCheckpoint, verifyCheckpoint, type Checkpoint } from './checkpoint';
export { MerkleFrontier } from './frontier';
export { EMPTY_ROOT, hashLeaf, type Hash } from './hashing';
export {
  loadOrCreateSigningKey,
  parsePublicKey,
  verifierKey,
  type PublicKeyInput,
  type SigningKey,
} from './keys';
export { MemoryLeafHashes, MemorySubtreeRoots, type LeafHashes } from './leafStore';
export { createProofBuilder } from './proofs';
export { checkpointDue, MerkleSealer } from './sealer';
export {
  decryptSecret,
  encryptSecret,
  FileDataKeyStore,
  generateDataKey,
  isEncryptedSecret,
  loadOrCreateMasterKey,
  masterKeyFrom,
  parseEncryptedSecret,
  PostgresDataKeyStore,
  rewrapDataKey,
  SecretUnavailableError,
  SecretVault,
  unwrapDataKey,
  wrapDataKey,
  type DataKeyStore,
} from './shredding';
export { verifyConsistency, verifyInclusion } from './verifyProofs';
export { verifyLog, type VerifyLogResult, type VerifyProgress } from './verifyLog';
export {
  appendWitness,
  judgeWithWitnesses,
  readWitness,
  witnessedNotesBeyond,
  witnessFile,
  type WitnessedResult,
} from './witness';
