/**
 * Sealing's promises, for generated event data (secret and plain keys in every style, nested
 * objects and arrays, scalars of every JSON type, URLs and connection strings with passwords):
 * - what readers see does not change: mask(seal(v)) equals mask(v), so projections and a rebuild
 *   hold what they held before sealing;
 * - nothing is lost: unseal(seal(v)) equals v;
 * - nothing leaks: no secret of v appears in seal(v);
 * - forgetting is total: unsealed without its key, every secret reads as forgotten and none of v's
 *   secrets is left, while every plain value is.
 * Beside them, a kill check: sealing that seals again a secret already sealed (the check for
 * ciphertext copied along left out) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { encryptSecret, generateDataKey, type DataKey } from '../../src/ledger/envelope';
import {
  FORGOTTEN,
  holdsPlainSecrets,
  sealingKeyIds,
  sealSecrets,
  unsealSecrets,
} from '../../src/ledger/sealing';
import { hideSecrets, maskSecrets } from '../../src/shared/secrets';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = 300;

/** Markers are unique, long enough never to occur in ciphertext or in each other by chance. */
const marker = (kind: string) => fc.stringMatching(/^[a-z0-9]{10}$/).map((s) => `${kind}${s}`);

const secretKey = fc.constantFrom(
  'password',
  'DB_PASSWORD',
  'dbPassword',
  'api_key',
  'X-Api-Key',
  'awsSecretAccessKey',
  'token',
  'Authorization',
  'client_secret',
  'credentials',
);
const plainKey = fc.constantFrom('host', 'max_tokens', 'model_name', 'temperature', 'region', 'primary_key');

/** A secret value: any JSON scalar, or an array / object of them (all of it is secret). */
const secretValue = fc.oneof(
  marker('sec'),
  fc.integer().map((n) => n),
  fc.boolean(),
  fc.constant(null),
  fc.array(marker('sec'), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'b', 'nested'), marker('sec'), { maxKeys: 2 }),
);
const urlWithPassword = fc
  .tuple(marker('usr'), marker('sec'), marker('dbn'))
  .map(([user, pw, db]) => `postgres://${user}:${pw}@db.example.com:5432/${db}`);
const connectionString = fc
  .tuple(marker('usr'), marker('sec'))
  .map(([user, pw]) => `Server=db;User Id=${user};Password=${pw};`);

type Tree = unknown;
const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    marker('pln'),
    fc.integer(),
    urlWithPassword,
    fc.dictionary(
      fc.oneof(plainKey, secretKey, fc.constantFrom('conn_str', 'connection_string', 'url')),
      fc.oneof(tie('tree'), secretValue, connectionString),
      { maxKeys: 5 },
    ),
    fc.array(tie('tree'), { maxLength: 3 }),
  ),
}));
const eventData = fc.dictionary(fc.oneof(plainKey, secretKey, fc.constant('params')), tree, { maxKeys: 5 });

/** Every secret in `data`, as the masking rule finds them (whole values as JSON text, parts as text). */
const secretsOf = (data: unknown): string[] => {
  const found: string[] = [];
  hideSecrets(data, (secret) => {
    const text = typeof secret === 'string' ? secret : JSON.stringify(secret);
    for (const m of text.match(/sec[a-z0-9]{10}/g) ?? []) found.push(m);
    return secret;
  });
  return found;
};
const plainsOf = (data: unknown): string[] =>
  JSON.stringify(maskSecrets(data)).match(/pln[a-z0-9]{10}/g) ?? [];

type Seal = <T>(data: T, key: DataKey) => T;

/** Sealing with the check for ciphertext left out: a sealed secret is sealed again (the kill check's bug). */
const sealingSealedAgain: Seal = (data, key) =>
  hideSecrets(data, (secret, whole) => encryptSecret(whole ? JSON.stringify(secret) : String(secret), key));

describe('sealing secrets (generated event data)', () => {
  const key = generateDataKey('rtest-0001');
  const keys = new Map([[key.kid, key]]);

  /** What `seal` makes of `data` masks as `data` does, unseals to it, and holds none of its secrets. */
  const keepsLosesNothingLeaksNothing = (data: Record<string, unknown>, seal: Seal) => {
    const sealed = seal(data, key);
    expect(maskSecrets(sealed)).toEqual(maskSecrets(data));
    expect(unsealSecrets(sealed, keys)).toEqual(data);
    const text = JSON.stringify(sealed);
    for (const s of secretsOf(data)) expect(text).not.toContain(s);
    expect(holdsPlainSecrets(sealed)).toBe(false);
    if (secretsOf(data).length > 0) expect([...sealingKeyIds(sealed)]).toEqual([key.kid]);
    // Sealing what is sealed changes nothing (a decision copying a sealed value along).
    expect(seal(sealed, generateDataKey('rtest-0002'))).toEqual(sealed);
  };

  it('keeps what readers see, loses nothing, and leaks no secret', () => {
    fc.assert(
      fc.property(eventData, (data) => keepsLosesNothingLeaksNothing(data, sealSecrets)),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
  });

  it('kill check: a secret already sealed, sealed again, is caught', () => {
    expectCaught(
      fc.property(eventData, (data) => keepsLosesNothingLeaksNothing(data, sealingSealedAgain)),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
  });

  it('without its key, every secret reads as forgotten and every plain value stays', () => {
    fc.assert(
      fc.property(eventData, (data) => {
        const forgotten = unsealSecrets(sealSecrets(data, key), new Map());
        const text = JSON.stringify(forgotten);
        for (const s of secretsOf(data)) expect(text).not.toContain(s);
        for (const p of plainsOf(data)) expect(text).toContain(p);
        if (secretsOf(data).length > 0) expect(text).toContain(FORGOTTEN);
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
  });
});

describe('sealing wide event data', () => {
  it('given data holding an array of 300,000 items beside a secret, when sealed, read for its keys and unsealed, then nothing overflows and nothing is lost', () => {
    // A CREATE SKILL at SQL_MAX_QUERY_BYTES carried such an array: spreading it onto a stack
    // overflowed the call stack and the statement was refused with V8's own message.
    const key = generateDataKey('rtest-0003');
    const data = { items: Array.from({ length: 300_000 }, (_, i) => `item${i}`), password: 'hunter2' };
    const sealed = sealSecrets(data, key);
    expect(JSON.stringify(sealed)).not.toContain('hunter2');
    expect([...sealingKeyIds(sealed)]).toEqual([key.kid]);
    expect(unsealSecrets(sealed, new Map([[key.kid, key]]))).toEqual(data);
  });
});
