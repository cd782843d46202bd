import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import {
  type DataKeyStore,
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
} from '../../src/ledger';
import { freshPostgresDatabase } from '../support/postgres';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-shred-'));
const master = masterKeyFrom(crypto.randomBytes(32));

const problemOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    if (error instanceof SecretUnavailableError) return error.problem;
    throw error;
  }
  return 'decrypted';
};

const flipBit = (text: string, bit: number) => {
  const [prefix, payload] = [text.slice(0, text.lastIndexOf(':') + 1), text.slice(text.lastIndexOf(':') + 1)];
  const bytes = Buffer.from(payload, 'base64url');
  bytes[(bit >> 3) % bytes.length]! ^= 1 << (bit & 7);
  return prefix + bytes.toString('base64url');
};

describe('secrets encrypted under a data key', () => {
  it('given any text, then it round-trips, and the ciphertext is marked and names its key', () => {
    const dataKey = generateDataKey('skill-42');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (value) => {
        const text = encryptSecret(value, dataKey);
        expect(text).toMatch(/^enc:v1:skill-42:[A-Za-z0-9_-]+$/);
        expect(isEncryptedSecret(text)).toBe(true);
        expect(decryptSecret(text, dataKey)).toBe(value);
      }),
      { seed: 11, numRuns: 200 },
    );
  });

  it('given the same value twice, then the ciphertexts differ (a fresh 96-bit nonce each time)', () => {
    const dataKey = generateDataKey();
    const [a, b] = [encryptSecret('hunter2', dataKey), encryptSecret('hunter2', dataKey)];
    expect(a).not.toBe(b);
    const [pa, pb] = [parseEncryptedSecret(a), parseEncryptedSecret(b)];
    expect(pa).toMatchObject({ v: 1, alg: 'A256GCM', kid: dataKey.kid });
    expect([pa.nonce.length, pa.tag.length, pa.ct.length]).toEqual([12, 16, 7]);
    expect(pa.nonce.equals(pb.nonce)).toBe(false);
  });

  it('given any single bit flipped in a ciphertext, then decryption reports it tampered', () => {
    const dataKey = generateDataKey();
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 50 }), fc.nat(), (value, bit) => {
        const text = encryptSecret(value, dataKey);
        expect(problemOf(() => decryptSecret(flipBit(text, bit), dataKey))).toBe('tampered');
      }),
      { seed: 12, numRuns: 300 },
    );
  });

  it('given a ciphertext relabelled with another key id, or the wrong key, then it does not decrypt', () => {
    const [a, b] = [generateDataKey('a'), generateDataKey('b')];
    const text = encryptSecret('secret', a);
    expect(problemOf(() => decryptSecret(text, b))).toBe('wrong-key');
    // The header is bound as associated data: b's key under a's label still fails.
    const relabelled = text.replace('enc:v1:a:', 'enc:v1:b:');
    expect(problemOf(() => decryptSecret(relabelled, b))).toBe('tampered');
    expect(problemOf(() => decryptSecret(relabelled, { kid: 'b', key: a.key }))).toBe('tampered');
    expect(problemOf(() => decryptSecret('enc:v1:a:%%%', a))).toBe('malformed');
  });
});

describe('data keys wrapped by the master key', () => {
  it('given a wrapped key, then only the master key and the same key id unwrap it', () => {
    const dataKey = generateDataKey('db-7');
    const wrapped = wrapDataKey(dataKey, master);
    expect(wrapped).toMatch(new RegExp(`^wrap:v1:${master.kid}:[A-Za-z0-9_-]+$`));
    expect(unwrapDataKey(wrapped, 'db-7', master).key.equals(dataKey.key)).toBe(true);
    expect(problemOf(() => unwrapDataKey(wrapped, 'db-8', master))).toBe('tampered');
    expect(problemOf(() => unwrapDataKey(wrapped, 'db-7', masterKeyFrom(crypto.randomBytes(32))))).toBe(
      'wrong-key',
    );
    const impostor = { kid: master.kid, key: crypto.randomBytes(32) };
    expect(problemOf(() => unwrapDataKey(wrapped, 'db-7', impostor))).toBe('tampered');
  });

  it('given a master key rotation, then re-wrapped keys unwrap with the new master alone', () => {
    const next = masterKeyFrom(crypto.randomBytes(32));
    const dataKey = generateDataKey('agent-1');
    const rewrapped = rewrapDataKey(wrapDataKey(dataKey, master), 'agent-1', master, next);
    expect(unwrapDataKey(rewrapped, 'agent-1', next).key.equals(dataKey.key)).toBe(true);
    expect(problemOf(() => unwrapDataKey(rewrapped, 'agent-1', master))).toBe('wrong-key');
  });

  it('given a master key path, then the key is created once with mode 0600 and read back', () => {
    const file = path.join(tmp(), 'keys', 'master.key');
    const created = loadOrCreateMasterKey(`file:${file}`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateMasterKey(`file:${file}`)).toEqual(created);
    expect(loadOrCreateMasterKey(created.key.toString('base64'))).toEqual(created);
  });

  it('given a key file whose path is 43 base64 characters, then the file holds the key, never the path', () => {
    const dir = tmp();
    // Pad the file's name until its path is exactly 43 characters of the (URL-safe) base64 alphabet.
    const file = path.join(dir, 'k'.repeat(43 - dir.length - 1));
    expect(file).toMatch(/^[A-Za-z0-9+/_-]{43}$/);
    const created = loadOrCreateMasterKey(`file:${file}`);
    expect(fs.existsSync(file)).toBe(true);
    expect(created.key.equals(Buffer.from(file, 'base64'))).toBe(false);
    // The same text given as a key is a key: how it is given says which.
    expect(loadOrCreateMasterKey(file).key.equals(Buffer.from(file, 'base64'))).toBe(true);
    expect(() => loadOrCreateMasterKey('/not/a/key')).toThrow(/file:<path>/);
  });
});

describe('forgetting a secret (crypto-shredding)', () => {
  it('given a destroyed data key, then its secrets cannot be decrypted, and nothing of the key is left in the store', async () => {
    const directory = tmp();
    const store = new FileDataKeyStore(directory);
    const vault = new SecretVault(store, master);
    const kept = await vault.createKey('database-keep');
    const forgotten = await vault.createKey('database-forget');
    const keptSecret = await vault.encrypt(kept.kid, 'keep me');
    const secret = await vault.encrypt(forgotten.kid, 'pa$$w0rd');
    const wrappedBefore = (await store.get('database-forget'))!;
    expect(fs.statSync(path.join(directory, 'database-forget.key')).mode & 0o777).toBe(0o600);

    expect(await vault.destroyKey('database-forget')).toBe(true);

    await expect(vault.decrypt(secret)).rejects.toMatchObject({ problem: 'forgotten' });
    // A fresh process (new vault, same store and master key) cannot either.
    await expect(new SecretVault(store, master).decrypt(secret)).rejects.toMatchObject({
      problem: 'forgotten',
    });
    expect(await store.get('database-forget')).toBeNull();
    expect(fs.readdirSync(directory)).toEqual(['database-keep.key']);
    const leftovers = fs.readdirSync(directory).map((f) => fs.readFileSync(path.join(directory, f), 'utf8'));
    expect(leftovers.some((content) => content.includes(wrappedBefore.split(':')[3]!))).toBe(false);
    // The in-memory copy handed out at creation was wiped too.
    expect(forgotten.key.equals(Buffer.alloc(32))).toBe(true);
    // The other resource's secret is untouched.
    expect(await new SecretVault(store, master).decrypt(keptSecret)).toBe('keep me');
    expect(await vault.destroyKey('database-forget')).toBe(false);
  });

  it('given a key id in use, then the store refuses to overwrite it', async () => {
    const store = new FileDataKeyStore(tmp());
    await store.put('k1', wrapDataKey(generateDataKey('k1'), master));
    await expect(store.put('k1', wrapDataKey(generateDataKey('k1'), master))).rejects.toThrow(
      'exists already',
    );
  });
});

describe('the data key stores list a resource’s keys by prefix', () => {
  // Key ids as the sealing makes them (`r<digest>-<random>`) and others (`master-key-check`).
  const kidArb = fc.oneof(
    fc
      .tuple(fc.constantFrom('ra-', 'rb-', 'rab-'), fc.stringMatching(/^[0-9a-f]{1,4}$/))
      .map(([p, s]) => p + s),
    fc.constantFrom('master-key-check', 'k1', 'rab'),
  );
  const prefixArb = fc.constantFrom('', 'r', 'ra', 'ra-', 'rab-', 'rb-', 'master-', 'k', 'rc-');
  const opsArb = fc.array(fc.tuple(fc.boolean(), kidArb), { maxLength: 25 });

  const check = async (open: () => Promise<{ store: DataKeyStore; reopen: () => Promise<DataKeyStore> }>) => {
    await fc.assert(
      fc.asyncProperty(opsArb, fc.array(prefixArb, { minLength: 1, maxLength: 4 }), async (ops, prefixes) => {
        const { store, reopen } = await open();
        const held = new Set<string>();
        for (const [put, kid] of ops) {
          if (put && !held.has(kid)) {
            await store.put(kid, wrapDataKey(generateDataKey(kid), master));
            held.add(kid);
          } else if (!put) {
            expect(await store.destroy(kid)).toBe(held.delete(kid));
          }
        }
        const expected = (prefix: string) => [...held].filter((k) => k.startsWith(prefix)).sort();
        const again = await reopen();
        for (const prefix of prefixes) {
          expect(await store.list(prefix)).toEqual(expected(prefix));
          expect(await again.list(prefix)).toEqual(expected(prefix));
        }
      }),
      { seed: 1524, numRuns: 40 },
    );
  };

  it('on files, and a store opened again on the same directory', async () => {
    await check(async () => {
      const directory = tmp();
      return { store: new FileDataKeyStore(directory), reopen: async () => new FileDataKeyStore(directory) };
    });
  });

  it('on PostgreSQL', async () => {
    const database = await freshPostgresDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      await check(async () => {
        await pool.query('DROP TABLE IF EXISTS mindledger_data_keys');
        const store = await PostgresDataKeyStore.open(pool);
        return { store, reopen: () => PostgresDataKeyStore.open(pool) };
      });
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});
