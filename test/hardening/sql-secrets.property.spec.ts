/**
 * Secrets inside stored SQL texts (a job's or a trigger's statements, a recorded statement) are found
 * as the statement's parser reads its option lists (src/shared/sqlOptions.ts), never by a pattern
 * over the text. Property, over generated statements (`CREATE DATABASE … PARAMETERS = {…}`,
 * `CREATE ML_ENGINE … USING …`, `CREATE SKILL … USING …`, `UPDATE SKILL … SET …`, several in one
 * job), with keys that are and are not secrets, values in every quoting the grammar reads (doubled
 * quotes, backslash escapes, double quotes, bare words, numbers), nested objects and lists:
 * - the text parses (the generator writes only what the grammar reads);
 * - masked, no value under a secret key is left, and every other value is;
 * - sealed, no secret is left; unsealed, the text comes back byte for byte; and the mask of the
 *   sealed text is the mask of the plain one (a rebuilt read model equals the live one).
 * Beside it, a kill check: a mask that reads only a text's first statement (the statements after
 * it left as written) is caught at the count `npm test` runs.
 */
import crypto from 'node:crypto';
import fc from 'fast-check';
import { generateDataKey } from '../../src/ledger';
import { holdsPlainSecrets, sealSecrets, unsealSecrets } from '../../src/ledger/sealing';
import { isSyntaxProblem, parseMindsStatement } from '../../src/sql/parse';
import { maskSecrets } from '../../src/shared/secrets';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = 300;

const SECRET_KEYS = ['password', 'api_key', 'openai_api_key', 'token', 'client_secret', 'ANTHROPIC_KEY'];
const PLAIN_KEYS = ['host', 'user', 'model_name', 'database', 'max_tokens', 'primary_key'];

/** A value's markers: each leaf carries one, unique, so its presence in a text can be told. */
type Leaf = { marker: string; secret: boolean };

/** Pieces of a quoted string's content, each written as the grammar reads it inside '…'. */
const singleQuotedPieces = fc.constantFrom(
  "''",
  "\\'",
  '\\\\',
  '"',
  ';',
  ' ',
  '{',
  '}',
  ',',
  '=',
  'é',
  '😀',
  'x',
);
const doubleQuotedPieces = fc.constantFrom('""', '\\"', '\\\\', "'", ';', ' ', '[', ':', 'é', 'x');

type Value = { text: string; leaves: Leaf[] };

let counter = 0;
const nextMarker = () => `Mk${(counter++).toString(36)}Q`;

/** A value's text under a key that is (or is not) secret, nested to `depth`. */
const valueOf = (secret: boolean, depth: number): fc.Arbitrary<Value> => {
  const scalar: fc.Arbitrary<Value> = fc.oneof(
    fc.array(singleQuotedPieces, { maxLength: 4 }).map((pieces) => {
      const marker = nextMarker();
      return {
        text: `'${pieces.join('')}${marker}${pieces.reverse().join('')}'`,
        leaves: [{ marker, secret }],
      };
    }),
    fc.array(doubleQuotedPieces, { maxLength: 4 }).map((pieces) => {
      const marker = nextMarker();
      return { text: `"${marker}${pieces.join('')}"`, leaves: [{ marker, secret }] };
    }),
    fc.constant(null).map(() => {
      const marker = nextMarker();
      return { text: marker, leaves: [{ marker, secret }] };
    }),
    fc.integer({ min: 1, max: 1_000_000 }).map(() => {
      // Numbers too: unique, so a number left in the text is told apart from any other.
      const marker = String(913_000_000 + counter++);
      return { text: marker, leaves: [{ marker, secret }] };
    }),
  );
  if (depth <= 0) return scalar;
  return fc.oneof(
    { weight: 3, arbitrary: scalar },
    {
      weight: 1,
      arbitrary: fc.array(valueOf(secret, depth - 1), { maxLength: 3 }).map((items) => ({
        text: `[${items.map((i) => i.text).join(', ')}]`,
        leaves: items.flatMap((i) => i.leaves),
      })),
    },
    { weight: 1, arbitrary: objectOf(secret, depth - 1) },
  );
};

const keyArb = fc.oneof(
  fc.constantFrom(...SECRET_KEYS).map((k) => ({ key: k, secret: true })),
  fc.constantFrom(...PLAIN_KEYS).map((k) => ({ key: k, secret: false })),
);

/** `{"k": v, k2: v2}`: keys quoted or bare; under a secret key every leaf is secret. */
const objectOf = (secret: boolean, depth: number): fc.Arbitrary<Value> =>
  fc
    .uniqueArray(keyArb, { selector: (k) => k.key, maxLength: 3 })
    .chain((keys) =>
      fc.tuple(
        ...keys.map((k) => fc.tuple(fc.constant(k), fc.boolean(), valueOf(secret || k.secret, depth))),
      ),
    )
    .map((members) => ({
      text: `{${members.map(([k, quoted, v]) => `${quoted ? `"${k.key}"` : k.key}: ${v.text}`).join(', ')}}`,
      leaves: members.flatMap(([, , v]) => v.leaves),
    }));

/** `k = v, …` as USING and SET read them. */
const assignments = fc
  .uniqueArray(keyArb, { selector: (k) => k.key, minLength: 1, maxLength: 4 })
  .chain((keys) => fc.tuple(...keys.map((k) => fc.tuple(fc.constant(k), valueOf(k.secret, 2)))))
  .map((pairs) => ({
    text: pairs.map(([k, v]) => `${k.key} = ${v.text}`).join(', '),
    leaves: pairs.flatMap(([, v]) => v.leaves),
  }));

const statement: fc.Arbitrary<Value> = fc.oneof(
  objectOf(false, 2).map((o) => ({
    text: `CREATE DATABASE d WITH ENGINE = 'postgres', PARAMETERS = ${o.text}`,
    leaves: o.leaves,
  })),
  assignments.map((a) => ({ text: `CREATE ML_ENGINE e FROM openai USING ${a.text}`, leaves: a.leaves })),
  assignments.map((a) => ({ text: `CREATE SKILL p.s USING ${a.text}`, leaves: a.leaves })),
  assignments.map((a) => ({ text: `UPDATE SKILL p.s SET ${a.text}`, leaves: a.leaves })),
);

/** How a stored SQL text is masked: `maskSecrets` on the field that holds it. */
type Mask = (value: { query: string }) => { query: string };

/** The kill check's bug: only the text's first statement is masked, the statements after it left as written. */
const firstStatementOnly: Mask = ({ query }) => {
  const [first = '', ...rest] = query.split(';\n');
  return { query: [maskSecrets({ query: first }).query, ...rest].join(';\n') };
};

describe('secrets in stored SQL texts, found as the parser reads the statement', () => {
  const key = generateDataKey('job-1');

  /** The promise, for one job's statements, with `mask` as the masker. */
  const hidesEverySecretAndOnlyThose = (statements: Value[], mask: Mask) => {
    for (const s of statements) expect(isSyntaxProblem(parseMindsStatement(s.text))).toBe(false);
    const text = statements.map((s) => s.text).join(';\n');
    const leaves = statements.flatMap((s) => s.leaves);

    const masked = mask({ query: text }).query;
    for (const leaf of leaves)
      expect([leaf.marker, masked.includes(leaf.marker)]).toEqual([leaf.marker, !leaf.secret]);

    const sealed = sealSecrets({ query: text }, key);
    for (const leaf of leaves) if (leaf.secret) expect(sealed.query).not.toContain(leaf.marker);
    expect(holdsPlainSecrets(sealed)).toBe(false);
    expect(unsealSecrets(sealed, new Map([[key.kid, key]])).query).toBe(text);
    expect(mask(sealed).query).toBe(masked);
  };

  const jobs = fc.array(statement, { minLength: 1, maxLength: 3 });

  it('given generated statements, then masking and sealing hide every secret value and only those', () => {
    fc.assert(
      fc.property(jobs, (statements) => hidesEverySecretAndOnlyThose(statements, maskSecrets)),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
  });

  it("kill check: a mask that reads only a text's first statement is caught", () => {
    expectCaught(
      fc.property(jobs, (statements) => hidesEverySecretAndOnlyThose(statements, firstStatementOnly)),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
  });

  it('given SQL that holds no option list, then it is left as written', () => {
    const texts = [
      "SELECT * FROM a JOIN b USING (id) WHERE password = 'x'",
      'UPDATE t SET n = n + 1',
      "INSERT INTO t (password) VALUES ('kept')",
      `SELECT '${crypto.randomBytes(4).toString('hex')} using set parameters'`,
    ];
    for (const text of texts) expect(maskSecrets({ query: text }).query).toBe(text);
  });
});
