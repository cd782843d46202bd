import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {
  EMPTY_ROOT,
  loadOrCreateSigningKey,
  parsePublicKey,
  signCheckpoint,
  verifierKey,
  verifyCheckpoint,
  type Checkpoint,
} from '../../src/ledger';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-keys-'));
const newKey = () =>
  loadOrCreateSigningKey(
    crypto.generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  );

const checkpoint = (over: Partial<Checkpoint> = {}): Checkpoint => ({
  origin: 'mindledger.example/audit',
  treeSize: 1234,
  rootHash: crypto.createHash('sha256').update('root').digest(),
  timestamp: '2025-06-07T08:09:10.111Z',
  lastPosition: 1300n,
  ...over,
});

describe('signing keys', () => {
  it('given a path that does not exist, when the key is loaded twice, then it is created once with mode 0600 and reused', () => {
    const file = path.join(tmp(), 'nested', 'ledger.key');
    const created = loadOrCreateSigningKey(file);
    expect(created.source).toBe('created');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const loaded = loadOrCreateSigningKey(file);
    expect(loaded.source).toBe('file');
    expect(loaded.fingerprint).toBe(created.fingerprint);
    expect(loaded.warnings).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toContain('-----BEGIN PRIVATE KEY-----');
  });

  it('given a key file others can read, then loading it warns', () => {
    const file = path.join(tmp(), 'ledger.key');
    loadOrCreateSigningKey(file);
    fs.chmodSync(file, 0o644);
    expect(loadOrCreateSigningKey(file).warnings).toEqual([
      `The signing key file ${file} is readable by others (mode 644); chmod 600 it`,
    ]);
  });

  it('given the same key as PEM, as a raw base64 seed and as libsodium 64 bytes, then all give one public key', () => {
    const { privateKey } = crypto.generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
    const fromPem = loadOrCreateSigningKey(pem);
    const fromSeed = loadOrCreateSigningKey(seed.toString('base64'));
    const fromSodium = loadOrCreateSigningKey(Buffer.concat([seed, fromPem.publicKeyRaw]).toString('base64'));
    expect([fromPem.source, fromSeed.source, fromSodium.source]).toEqual(['pem', 'raw', 'raw']);
    expect(new Set([fromPem.fingerprint, fromSeed.fingerprint, fromSodium.fingerprint]).size).toBe(1);
    expect(fromPem.fingerprint).toBe(crypto.createHash('sha256').update(fromPem.publicKeyRaw).digest('hex'));
    expect(fromPem.publicKeyPem).toContain('-----BEGIN PUBLIC KEY-----');
  });

  it('given a key that is not Ed25519, then it is refused', () => {
    const rsa = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(() => loadOrCreateSigningKey(rsa.export({ format: 'pem', type: 'pkcs8' }).toString())).toThrow(
      'is a ec key, not Ed25519',
    );
  });

  it('given a public key as PEM, raw base64 or verifier key, then each parses to the same key', () => {
    const key = newKey();
    const vkey = verifierKey('mindledger.example/audit', key.publicKey);
    for (const form of [key.publicKeyPem, key.publicKeyRaw.toString('base64'), vkey, key.publicKey])
      expect(parsePublicKey(form).export({ format: 'der', type: 'spki' })).toEqual(
        key.publicKey.export({ format: 'der', type: 'spki' }),
      );
    expect(() => parsePublicKey(vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toThrow('does not belong');
  });
});

describe('signed checkpoints (c2sp.org/tlog-checkpoint as a c2sp.org/signed-note)', () => {
  const key = newKey();

  it('given a checkpoint, then the note is origin, size, base64 root, time, last position, a blank line and one signature line', () => {
    const cp = checkpoint();
    const note = signCheckpoint(cp, key);
    const lines = note.split('\n');
    expect(lines.slice(0, 6)).toEqual([
      'mindledger.example/audit',
      '1234',
      cp.rootHash.toString('base64'),
      'time 2025-06-07T08:09:10.111Z',
      'last-position 1300',
      '',
    ]);
    expect(lines[7]).toBe('');
    const [dash, name, encoded] = lines[6]!.split(' ');
    expect([dash, name]).toEqual(['\u2014', 'mindledger.example/audit']);
    const signature = Buffer.from(encoded!, 'base64');
    // Key ID = SHA-256(key name || 0x0A || 0x01 || public key)[:4], then the Ed25519 signature of the text.
    const keyId = crypto
      .createHash('sha256')
      .update(Buffer.concat([Buffer.from('mindledger.example/audit\n'), Buffer.from([1]), key.publicKeyRaw]))
      .digest()
      .subarray(0, 4);
    expect(signature.subarray(0, 4)).toEqual(keyId);
    const text = Buffer.from(lines.slice(0, 5).join('\n') + '\n');
    expect(crypto.verify(null, text, crypto.createPublicKey(key.publicKeyPem), signature.subarray(4))).toBe(
      true,
    );
    expect(verifierKey('mindledger.example/audit', key.publicKey).split('+')[1]).toBe(keyId.toString('hex'));
  });

  it('given a signed checkpoint, then it verifies with the public key and parses back to the same checkpoint', () => {
    const cp = checkpoint();
    const result = verifyCheckpoint(signCheckpoint(cp, key), key.publicKeyPem);
    expect(result).toEqual({ ok: true, checkpoint: cp, keyId: expect.stringMatching(/^[0-9a-f]{8}$/) });
  });

  it('given the empty tree, then its checkpoint has no last position and the root of nothing', () => {
    const cp = checkpoint({ treeSize: 0, rootHash: EMPTY_ROOT, lastPosition: null });
    const note = signCheckpoint(cp, key);
    expect(note.split('\n').slice(0, 4)).toEqual([
      'mindledger.example/audit',
      '0',
      '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
      'time 2025-06-07T08:09:10.111Z',
    ]);
    expect(verifyCheckpoint(note, key.publicKey)).toMatchObject({ ok: true, checkpoint: cp });
  });

  it('given any checkpoint, when any single bit of its note is flipped, then verification fails', () => {
    fc.assert(
      fc.property(
        fc.record({
          origin: fc.stringMatching(/^[a-z0-9.\-/]{1,30}$/),
          treeSize: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
          rootHash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b)),
          timestamp: fc
            .date({ min: new Date(0), max: new Date('2999-12-31T00:00:00Z'), noInvalidDate: true })
            .map((d) => d.toISOString()),
          lastPosition: fc.bigInt({ min: 1n, max: 2n ** 63n }),
        }),
        (cp) => {
          const note = Buffer.from(signCheckpoint(cp, key), 'utf8');
          expect(verifyCheckpoint(note.toString('utf8'), key.publicKey).ok).toBe(true);
          const accepted: number[] = [];
          for (let bit = 0; bit < note.length * 8; bit++) {
            const flipped = Buffer.from(note);
            flipped[bit >> 3]! ^= 1 << (bit & 7);
            if (verifyCheckpoint(flipped.toString('utf8'), key.publicKey).ok) accepted.push(bit);
          }
          expect(accepted).toEqual([]);
        },
      ),
      { seed: 99, numRuns: 12 },
    );
  });

  it('given a note signed by another key, then it fails; during a rotation either trusted key verifies', () => {
    const other = newKey();
    const note = signCheckpoint(checkpoint(), other);
    expect(verifyCheckpoint(note, key.publicKey)).toEqual({
      ok: false,
      reason: 'No signature by a trusted key for mindledger.example/audit',
    });
    expect(verifyCheckpoint(note, [key.publicKey, other.publicKey]).ok).toBe(true);
  });

  it('given a note cosigned by an unknown key, then the unknown signature is ignored', () => {
    const witness = newKey();
    const note = signCheckpoint(checkpoint(), key);
    const text = note.slice(0, note.indexOf('\n\n') + 1);
    const signature = crypto.sign(null, Buffer.from(text), witness.privateKey);
    const cosigned = `${note}\u2014 witness.example/w1 ${Buffer.concat([Buffer.alloc(4), signature]).toString('base64')}\n`;
    expect(verifyCheckpoint(cosigned, key.publicKey).ok).toBe(true);
  });

  it('given a signature by the trusted key under another name than the origin, then it is not accepted', () => {
    const note = signCheckpoint(checkpoint(), key);
    const renamed = note.replace('\u2014 mindledger.example/audit ', '\u2014 other.example/x ');
    expect(verifyCheckpoint(renamed, key.publicKey).ok).toBe(false);
  });
});
