// The audit ledger's cryptographic core: see README.md for the formats an auditor can check by hand.
export { canonicalJson, eventLeafHash, leafBytes, leafText, type RecordedEventLike } from './canonical';
export {
  checkpointBody,
  CheckpointFormatError,
  openSignedNote,
  parseCheckpointBody,
  signCheckpoint,
  verifyCheckpoint,
  type Checkpoint,
  type CheckpointVerification,
} from './checkpoint';
export { MerkleFrontier, type FrontierSnapshot, type SubtreeListener } from './frontier';
export { EMPTY_ROOT, hashChildren, hashLeaf, HASH_SIZE, type Hash } from './hashing';
export {
  keyFingerprint,
  loadOrCreateSigningKey,
  noteKeyId,
  parsePublicKey,
  rawPublicKey,
  verifierKey,
  type PublicKeyInput,
  type SigningKey,
} from './keys';
export { MemoryLeafHashes, MemorySubtreeRoots, type LeafHashes, type SubtreeRoots } from './leafStore';
export { createProofBuilder, type ProofBuilder, type ProofBuilderOptions } from './proofs';
export {
  checkpointDue,
  MerkleSealer,
  type CheckpointPolicy,
  type SealedLeaf,
  type SealerOptions,
  type SealerSnapshot,
} from './sealer';
export {
  decryptSecret,
  encryptSecret,
  FileDataKeyStore,
  formatEncryptedSecret,
  generateDataKey,
  isEncryptedSecret,
  loadOrCreateMasterKey,
  loadOrCreateMasterKeyFile,
  MASTER_KEY_FILE_PREFIX,
  masterKeyFrom,
  parseEncryptedSecret,
  PostgresDataKeyStore,
  rewrapDataKey,
  SecretUnavailableError,
  SecretVault,
  unwrapDataKey,
  wrapDataKey,
  type DataKey,
  type DataKeyStore,
  type EncryptedSecret,
  type MasterKey,
} from './shredding';
export { verifyConsistency, verifyInclusion } from './verifyProofs';
export {
  verifyLog,
  type VerifyLogOptions,
  type VerifyLogResult,
  type VerifyProblem,
  type VerifyProgress,
} from './verifyLog';
export {
  appendWitness,
  judgeWithWitnesses,
  readWitness,
  WITNESS_FILE,
  witnessedNotesBeyond,
  witnessFile,
  type WitnessCheck,
  type WitnessedCheckpoint,
  type WitnessedResult,
  type WitnessEntry,
} from './witness';
