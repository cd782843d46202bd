/**
 * Envelope encryption for secrets that must be forgettable although the log is append-only: each
 * resource's secrets are encrypted (AES-256-GCM) under its own data key; the data key is kept only
 * wrapped by the master key, in a key store outside the log. Destroying the wrapped data key makes
 * every ciphertext of that resource, wherever the log was copied, unreadable. See docs/security.md.
 *
 * This module is the ledger's door to shredding (src/ledger/index.ts re-exports it); its parts:
 * - envelope.ts: the keys and the cipher (master and data keys, wrapping, `enc:v1:` secrets);
 * - dataKeyStore.ts: where wrapped data keys live, outside the log, so that one can be destroyed;
 * - secretVault.ts: what services use (create a resource's key, encrypt, decrypt, forget).
 */

export {
  decryptSecret,
  encryptSecret,
  generateDataKey,
  isEncryptedSecret,
  loadOrCreateMasterKey,
  loadOrCreateMasterKeyFile,
  MASTER_KEY_FILE_PREFIX,
  masterKeyFrom,
  parseEncryptedSecret,
  rewrapDataKey,
  SecretUnavailableError,
  unwrapDataKey,
  wrapDataKey,
} from './envelope';
export { FileDataKeyStore, PostgresDataKeyStore, type DataKeyStore } from './dataKeyStore';
export { SecretVault } from './secretVault';
