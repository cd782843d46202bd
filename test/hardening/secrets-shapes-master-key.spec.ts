/**
 * Issue 57, defect 6: a LEDGER_MASTER_KEY holding a path (43 characters of the base64 alphabet, so
 * it decoded to 32 bytes) was used as the key itself, and a LEDGER_MASTER_KEY_FILE holding a key
 * wrote a file named after the key. Each variable says what it holds; the other kind is refused
 * when the configuration is read, naming the variable to use.
 */
import crypto from 'node:crypto';
import { loadConfig } from '../../src/config';

describe('the master key settings, each holding its own kind', () => {
  const key = () => crypto.randomBytes(32).toString('base64');

  it.each([
    // 43 characters of the base64 alphabet: it decodes to 32 bytes, and was taken for a key.
    '/var/lib/mindledger/keys/masterkeyfile00bin',
    '/var/lib/mindledger/keys/master-key-file.bin',
    './keys/master.key',
    '~/mindledger/master.key',
    'keys/master.key',
  ])('LEDGER_MASTER_KEY=%s is refused: it looks like a file path', (value) => {
    expect(() => loadConfig({ LEDGER_MASTER_KEY: value })).toThrow(
      `LEDGER_MASTER_KEY looks like a file path; set LEDGER_MASTER_KEY_FILE=${value} instead`,
    );
  });

  it('LEDGER_MASTER_KEY_FILE holding a key (standard or URL-safe base64, or behind file:) is refused, the key not repeated', () => {
    for (const value of [key(), crypto.randomBytes(32).toString('base64url')]) {
      const attempt = () => loadConfig({ LEDGER_MASTER_KEY_FILE: value });
      expect(attempt).toThrow(
        /LEDGER_MASTER_KEY_FILE looks like a key, not a file path; set LEDGER_MASTER_KEY=/,
      );
      expect(() => attempt()).not.toThrow(value);
      expect(() => loadConfig({ LEDGER_MASTER_KEY: `file:${value}` })).toThrow(/looks like a key/);
    }
  });

  it('a key is a key and a path a path: both still start', () => {
    const k = key();
    expect(loadConfig({ LEDGER_MASTER_KEY: k }).ledger.masterKey).toBe(k);
    const urlSafe = crypto.randomBytes(32).toString('base64url');
    expect(loadConfig({ LEDGER_MASTER_KEY: urlSafe }).ledger.masterKey).toBe(urlSafe);
    expect(
      loadConfig({ LEDGER_MASTER_KEY_FILE: '/var/lib/mindledger/keys/master.key' }).ledger.masterKey,
    ).toBe('file:/var/lib/mindledger/keys/master.key');
  });
});
