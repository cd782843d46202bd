/**
 * The promise: a tree ensemble compiled for the walk without branches (children side by side,
 * values compared as bins of the thresholds, leaves that lead to themselves, eight rows at a time;
 * src/engines/ml/gbdt.ts) scores every row exactly as walking each tree node by node does, to the bit,
 * whatever the trees' shapes and the values: ties with a threshold, missing values (NaN), infinities.
 * Beside it, a kill check: a scorer that walks whole groups of eight rows only (the rows after the
 * last group left unscored) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import {
  compileGbdt,
  compiledScores,
  gbdtScores,
  type GbdtModel,
  type Tree,
} from '../../src/engines/ml/gbdt';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const NUM_RUNS = Number(process.env.PROMISE_RUNS ?? 150);

/** A few thresholds the trees share, so that values land exactly on them. */
const THRESHOLDS = [-1e9, -2.5, -0, 0.1, 1, 1.0000000000000002, 3, 7.5, 1e300];

type Shape = { leaf: number } | { f: number; t: number; l: Shape; r: Shape };

const shape = (d: number): fc.Arbitrary<Shape> =>
  fc.letrec<{ node: Shape }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ leaf: fc.double({ min: -100, max: 100, noNaN: true }) }),
      fc.record({
        f: fc.integer({ min: 0, max: d - 1 }),
        t: fc.oneof(fc.constantFrom(...THRESHOLDS, -Infinity, Infinity), fc.double({ noNaN: true })),
        l: tie('node'),
        r: tie('node'),
      }),
    ),
  })).node;

/** A shape as the artifact stores it, nodes numbered depth first (the compiler lays them out anew). */
const toTree = (s: Shape): Tree => {
  const tree: Tree = { f: [], t: [], l: [], r: [], v: [] };
  const add = (n: Shape): number => {
    const at = tree.f.length;
    tree.f.push(-1);
    tree.t.push(0);
    tree.l.push(-1);
    tree.r.push(-1);
    tree.v.push(0);
    if ('leaf' in n) tree.v[at] = n.leaf;
    else {
      tree.f[at] = n.f;
      tree.t[at] = n.t;
      tree.l[at] = add(n.l);
      tree.r[at] = add(n.r);
    }
    return at;
  };
  add(s);
  return tree;
};

const value = fc.oneof(
  fc.constantFrom(...THRESHOLDS, NaN, Infinity, -Infinity, 0),
  fc.double(),
  fc.constantFrom(...THRESHOLDS).map((t) => t + Number.EPSILON * Math.max(1, Math.abs(t))),
);

const world = fc
  .record({ d: fc.integer({ min: 1, max: 6 }), outputs: fc.integer({ min: 1, max: 3 }) })
  .chain(({ d, outputs }) =>
    fc.record({
      d: fc.constant(d),
      outputs: fc.constant(outputs),
      base: fc.array(fc.double({ min: -10, max: 10, noNaN: true }), {
        minLength: outputs,
        maxLength: outputs,
      }),
      rounds: fc.array(fc.array(shape(d), { minLength: outputs, maxLength: outputs }), { maxLength: 8 }),
      // 0 to 40 rows: whole groups of eight and the rows after them.
      rows: fc.array(fc.array(value, { minLength: d, maxLength: d }), { maxLength: 40 }),
    }),
  );

type World = typeof world extends fc.Arbitrary<infer W> ? W : never;
type Scorer = typeof compiledScores;

/** Scores whole groups of eight rows only: the rows after the last group are left at 0 (the kill check's bug). */
const wholeGroupsOnly: Scorer = (c, X, n, d) => {
  const grouped = n - (n % 8);
  const out = new Float64Array(n * c.outputs);
  out.set(compiledScores(c, X.subarray(0, grouped * d), grouped, d));
  return out;
};

/** The compiled ensemble, scored by `score`, against the node-by-node walk. */
const scoresAsTheWalk = ({ d, outputs, base, rounds, rows }: World, score: Scorer) => {
  const model: GbdtModel = {
    kind: 'gbdt',
    outputs,
    base,
    trees: rounds.map((round) => round.map(toTree)),
  };
  const X = Float64Array.from(rows.flat());
  const expected = gbdtScores(model, X, rows.length, d);
  const compiled = score(compileGbdt(model), X, rows.length, d);
  expect(compiled.length).toBe(expected.length);
  compiled.forEach((s, i) => expect(Object.is(s, expected[i])).toBe(true));
};

describe('a compiled tree ensemble', () => {
  it('scores every row as the node-by-node walk does, to the bit', () => {
    fc.assert(
      fc.property(world, (w) => scoresAsTheWalk(w, compiledScores)),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });

  it('kill check: the rows after the last whole group of eight left unscored are caught', () => {
    expectCaught(
      fc.property(world, (w) => scoresAsTheWalk(w, wholeGroupsOnly)),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });

  it('reads a feature no tree splits on, and a row whose every value is missing, as the walk does', () => {
    const tree = toTree({ f: 0, t: 1, l: { leaf: -1 }, r: { f: 2, t: -0, l: { leaf: 2 }, r: { leaf: 5 } } });
    const model: GbdtModel = { kind: 'gbdt', outputs: 1, base: [0.5], trees: [[tree], [tree]] };
    const X = Float64Array.from([NaN, NaN, NaN, 2, 99, 0, 2, -99, 1e-300, 1, 0, 0]);
    expect(Array.from(compiledScores(compileGbdt(model), X, 4, 3))).toEqual([-1.5, 4.5, 10.5, -1.5]);
    expect(Array.from(gbdtScores(model, X, 4, 3))).toEqual([-1.5, 4.5, 10.5, -1.5]);
  });
});
