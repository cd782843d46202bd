/**
 * The rows a boosting round's trees did not learn from (the train rows outside the round's window,
 * and the dev rows) still need those trees added to their scores, and the dev loss decides when
 * boosting stops. On a million rows that is a fifth of training, and little of it has to wait:
 * only the rows the next window holds are needed before the next tree grows. The boosting thread
 * scores those at once and posts the rest, with the dev loss, as a job a helper thread runs while
 * the next tree grows; a job nobody has started yet is run by the boosting thread itself when it
 * needs the result. Either thread adds a row the same trees in the same order, so the scores, the
 * losses and the model are the same whoever runs a job, and with no helper at all.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BinnedFeatures } from './binning';
import type { GrownTree } from './histogramTree';

const { exp, log, log1p, max: maxOf } = Math;
const INFINITY = Infinity;

export type LossKind = 'l2' | 'binary' | 'softmax';

/** Everything a job reads and writes: typed arrays, on shared memory when a helper runs. */
export type ScoringState = {
  bins: Uint8Array;
  features: number;
  scores: Float64Array;
  outputs: number;
  y: Float64Array;
  weights: Float64Array | null;
  /** Train rows by position: a window is positions start .. start + windowSize (mod length). */
  train: Int32Array;
  windowSize: number;
  dev: Int32Array;
  loss: LossKind;
  /** The round's trees, one slot of maxNodes nodes per output; children are slot-relative. */
  maxNodes: number;
  feature: Int32Array;
  splitBin: Int32Array;
  left: Int32Array;
  right: Int32Array;
  value: Float64Array;
  /** [state, window start, next window start or −1, helper ready, jobs the helper ran] and the job's dev loss. */
  control: Int32Array;
  result: Float64Array;
};

const STATE = 0;
const START = 1;
const NEXT = 2;
const READY = 3;
const HELPED = 4;
const IDLE = 0;
const POSTED = 1;
const CLAIMED = 2;
const DONE = 3;
const STOP = 4;
const FAILED = 5;

/** probs[o..o+K) = softmax(scores[o..o+K)), without temporary arrays. */
export const softmaxRow = (scores: Float64Array, probs: Float64Array, o: number, K: number) => {
  let max = -INFINITY;
  for (let k = 0; k < K; k++) if (scores[o + k]! > max) max = scores[o + k]!;
  let sum = 0;
  for (let k = 0; k < K; k++) {
    const e = exp(scores[o + k]! - max);
    probs[o + k] = e;
    sum += e;
  }
  for (let k = 0; k < K; k++) probs[o + k]! /= sum;
};

/** The weighted mean loss of the dev rows' scores; `probs` is scratch for softmax. */
const devLoss = (s: ScoringState, probs: Float64Array | null) => {
  const { scores, y, weights, dev, outputs: K } = s;
  let loss = 0;
  let total = 0;
  // An indexed loop: `for … of` over the typed array took four times as long in the helper's profile.
  for (let q = 0; q < dev.length; q++) {
    const i = dev[q]!;
    const w = weights ? weights[i]! : 1;
    switch (s.loss) {
      case 'l2':
        loss += (scores[i]! - y[i]!) ** 2;
        total += 1;
        continue;
      case 'binary': {
        // log(1 + e^{-z}) for the true class, written to stay finite for large |z|.
        const z = y[i] === 1 ? scores[i]! : -scores[i]!;
        loss += w * (z > 0 ? log1p(exp(-z)) : -z + log1p(exp(z)));
        total += w;
        continue;
      }
      case 'softmax': {
        softmaxRow(scores, probs!, i * K, K);
        loss -= w * log(maxOf(probs![i * K + y[i]!]!, 1e-15));
        total += w;
        continue;
      }
    }
  }
  return loss / maxOf(total, 1e-12);
};

/** Adds the round's trees (one per output) to `row`'s scores, reading its bins. */
const addRound = (s: ScoringState, row: number) => {
  const { bins, feature, splitBin, left, right, value, scores, maxNodes, outputs: K } = s;
  const at = row * s.features;
  for (let k = 0; k < K; k++) {
    const slot = k * maxNodes;
    let i = slot;
    let f = feature[i]!;
    while (f >= 0) {
      i = slot + (bins[at + f]! <= splitBin[i]! ? left[i]! : right[i]!);
      f = feature[i]!;
    }
    scores[row * K + k]! += value[i]!;
  }
};

/**
 * Scores the round's outside rows that the next window holds (`needed`) or all the others with the
 * dev rows, then the dev loss.
 */
const scoreOutside = (s: ScoringState, needed: boolean, probs: Float64Array | null) => {
  const { train, windowSize: ws } = s;
  const nt = train.length;
  const start = s.control[START]!;
  const next = s.control[NEXT]!;
  for (let q = 0; q < nt - ws; q++) {
    const p = (start + ws + q) % nt;
    const inNext = next >= 0 && (p - next + nt) % nt < ws;
    if (inNext === needed) addRound(s, train[p]!);
  }
  if (needed) return;
  for (let q = 0; q < s.dev.length; q++) addRound(s, s.dev[q]!);
  s.result[0] = devLoss(s, probs);
};

const probsFor = (s: ScoringState) => (s.loss === 'softmax' ? new Float64Array(s.scores.length) : null);

/** The helper thread's loop: claims posted jobs until told to stop. */
export const runHelper = (s: ScoringState) => {
  const probs = probsFor(s);
  const c = s.control;
  Atomics.store(c, READY, 1);
  Atomics.notify(c, READY);
  for (;;) {
    const state = Atomics.load(c, STATE);
    if (state === STOP) return;
    if (state === POSTED && Atomics.compareExchange(c, STATE, POSTED, CLAIMED) === POSTED) {
      try {
        scoreOutside(s, false, probs);
        c[HELPED]!++;
        Atomics.store(c, STATE, DONE);
      } catch {
        Atomics.store(c, STATE, FAILED);
      }
      Atomics.notify(c, STATE);
      continue;
    }
    Atomics.wait(c, STATE, state);
  }
};

/** A job claimed by the helper is waited for at most this long before training gives up. */
const HELPER_TIMEOUT_MS = 300_000;
/** The first job waits this long at most for the helper to start (then its jobs run here). */
const HELPER_START_MS = 10_000;

export type OutsideScorer = ReturnType<typeof makeOutsideScorer>;

/**
 * The boosting thread's side. `post` scores the rows the next window needs and hands the rest to
 * the helper (or does it all when there is none); `finish` returns that job's dev loss once done,
 * running the job itself if the helper has not started it. Call `finish` before the next `post`.
 */
export const makeOutsideScorer = (
  binned: BinnedFeatures,
  scores: Float64Array,
  outputs: number,
  y: Float64Array,
  weights: Float64Array | null,
  train: Int32Array,
  windowSize: number,
  dev: Int32Array,
  loss: LossKind,
  maxNodes: number,
  helper: boolean,
) => {
  const shared = <T extends Float64Array | Int32Array | Uint8Array>(
    make: (b: ArrayBufferLike, length: number) => T,
    bytesPer: number,
    from: ArrayLike<number> | number,
  ): T => {
    const length = typeof from === 'number' ? from : from.length;
    const buffer = helper ? new SharedArrayBuffer(length * bytesPer) : new ArrayBuffer(length * bytesPer);
    const out = make(buffer, length);
    if (typeof from !== 'number') out.set(from);
    return out;
  };
  const f64 = (from: ArrayLike<number> | number) => shared((b, n) => new Float64Array(b, 0, n), 8, from);
  const i32 = (from: ArrayLike<number> | number) => shared((b, n) => new Int32Array(b, 0, n), 4, from);
  const slots = outputs * maxNodes;
  const s: ScoringState = {
    bins: shared((b, n) => new Uint8Array(b, 0, n), 1, binned.bins),
    features: binned.features,
    // Shared memory is only worth a copy when a helper reads it.
    scores: helper ? f64(scores) : scores,
    outputs,
    y: helper ? f64(y) : y,
    weights: weights && helper ? f64(weights) : weights,
    train: i32(train),
    windowSize,
    dev: i32(dev),
    loss,
    maxNodes,
    feature: i32(slots),
    splitBin: i32(slots),
    left: i32(slots),
    right: i32(slots),
    value: f64(slots),
    control: i32(5),
    result: f64(1),
  };
  const probs = probsFor(s);
  const c = s.control;
  let worker: Worker | null = null;
  if (helper) {
    // From source (tests, tsx) the helper is TypeScript: tsx's require hook is registered first.
    const fromSource = __filename.endsWith('.ts');
    const file = path.join(__dirname, fromSource ? 'scoringWorker.ts' : 'scoringWorker.js');
    worker = fromSource
      ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(file)});`, { eval: true, workerData: s })
      : new Worker(file, { workerData: s });
    worker.unref();
  }

  let first = true;
  const post = (trees: readonly GrownTree[], start: number, next: number) => {
    trees.forEach((g, k) => {
      const { feature, splitBin, left, right, value } = g.flat;
      const slot = k * maxNodes;
      s.feature.set(feature, slot);
      s.splitBin.set(splitBin, slot);
      s.left.set(left, slot);
      s.right.set(right, slot);
      s.value.set(value, slot);
    });
    c[START] = start;
    c[NEXT] = next;
    scoreOutside(s, true, probs);
    if (worker) {
      // The helper is given the time to start (tens of milliseconds built, a second or two from
      // source; the first tree grew meanwhile), so that it, not this thread, runs the jobs from
      // the first on.
      if (first) Atomics.wait(c, READY, 0, HELPER_START_MS);
      first = false;
      Atomics.store(c, STATE, POSTED);
      Atomics.notify(c, STATE);
    } else {
      scoreOutside(s, false, probs);
      c[STATE] = DONE;
    }
  };

  const finish = (): number => {
    if (Atomics.compareExchange(c, STATE, POSTED, CLAIMED) === POSTED) {
      scoreOutside(s, false, probs);
      Atomics.store(c, STATE, DONE);
    }
    const started = Date.now();
    for (let state = Atomics.load(c, STATE); state !== DONE; state = Atomics.load(c, STATE)) {
      if (state === FAILED) throw new Error('the scoring helper thread failed');
      if (Date.now() - started > HELPER_TIMEOUT_MS) throw new Error('the scoring helper thread stalled');
      Atomics.wait(c, STATE, state, 1000);
    }
    Atomics.store(c, STATE, IDLE);
    return s.result[0]!;
  };

  const close = () => {
    if (!worker) return;
    Atomics.store(c, STATE, STOP);
    Atomics.notify(c, STATE);
    worker = null;
  };

  /** How many jobs the helper thread ran (the rest ran on this thread). */
  const helped = () => Atomics.load(c, HELPED);

  return { scores: s.scores, post, finish, close, helped };
};
