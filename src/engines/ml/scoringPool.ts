import type { Worker } from 'node:worker_threads';
import { binFeatures, compiledScores, scoreRowsInto, type CompiledGbdt } from './gbdt';
import { mlWorker } from './workerThread';

/**
 * Tree ensembles scored on several threads. Walking 300 trees per row is the whole cost of a large
 * prediction (about 8 µs a row on one thread here), and rows are independent, so a batch's rows
 * are cut into chunks that this thread and the pool's workers claim one at a time from a shared
 * counter. The features, the scores and the ensemble live in shared memory: nothing is copied to
 * a worker.
 *
 * This thread takes part and never waits for a worker to start: a worker still booting (the first
 * large prediction starts them) finds the chunks taken. A worker that dies mid-batch costs nothing
 * but time: this thread scores every chunk not marked done (scoring twice writes the same values).
 */
export type ScoringPool = {
  /** Raw scores (K per row) of `n` rows of `d` features, row-major, NaN for missing. */
  scores: (model: CompiledGbdt, X: Float64Array, n: number, d: number) => Promise<Float64Array>;
  /**
   * Starts the workers now rather than with the first large batch; resolves once each is ready
   * (or has failed to start: batches do without it).
   */
  warm: () => Promise<void>;
  /** Stops the workers (a batch in flight finishes on this thread). */
  close: () => Promise<void>;
};

/** One batch, as every thread scoring it sees it: all arrays in shared memory. */
export type ScoringJob = {
  model: CompiledGbdt;
  /** Features, row-major, as the ensemble's bins (`binFeatures`). */
  x: Int32Array;
  d: number;
  n: number;
  chunkRows: number;
  /** The next chunk to claim, chunks done, one flag per chunk. */
  control: Int32Array;
  out: Float64Array;
};

/** Rows a thread takes at a time: small enough to share a 5,000-row batch evenly, large enough to cost no sync. */
const MIN_CHUNK_ROWS = 256;

/** Control words in shared memory: the next chunk to claim, chunks done, then one flag per chunk. */
const NEXT = 0;
const DONE = 1;
const FLAGS = 2;

const shared = <T extends Float64Array | Int32Array>(make: (buffer: SharedArrayBuffer) => T, bytes: number) =>
  make(new SharedArrayBuffer(bytes));

/** The ensemble's arrays copied once into shared memory, so workers read them in place. */
const shareModel = (c: CompiledGbdt): CompiledGbdt => {
  const f64 = (a: Float64Array) => {
    const s = shared((b) => new Float64Array(b), a.byteLength);
    s.set(a);
    return s;
  };
  const i32 = (a: Int32Array) => {
    const s = shared((b) => new Int32Array(b), a.byteLength);
    s.set(a);
    return s;
  };
  return {
    outputs: c.outputs,
    base: f64(c.base),
    roots: i32(c.roots),
    depths: i32(c.depths),
    feature: i32(c.feature),
    bin: i32(c.bin),
    child: i32(c.child),
    value: f64(c.value),
    cuts: f64(c.cuts),
    cutStarts: i32(c.cutStarts),
  };
};

/** Scores the rows of one chunk of a batch into its scores. */
const scoreChunk = ({ model, x, d, n, chunkRows, out }: ScoringJob, chunk: number) =>
  scoreRowsInto(model, x, d, chunk * chunkRows, Math.min(n, (chunk + 1) * chunkRows), out);

/**
 * Claims chunks until none is left, scoring each and marking it done. Run by every thread of a
 * batch; a worker then says so (the last chunk's thread always does, so the batch's owner wakes).
 */
export const scoreClaimedChunks = (job: ScoringJob) => {
  const { n, chunkRows, control } = job;
  const chunks = Math.ceil(n / chunkRows);
  for (;;) {
    const chunk = Atomics.add(control, NEXT, 1);
    if (chunk >= chunks) return;
    scoreChunk(job, chunk);
    Atomics.store(control, FLAGS + chunk, 1);
    Atomics.add(control, DONE, 1);
  }
};

/** A batch laid out in shared memory for `helpers` workers and this thread. */
const jobOf = (
  model: CompiledGbdt,
  sharedModel: CompiledGbdt,
  X: Float64Array,
  n: number,
  d: number,
  helpers: number,
): ScoringJob => {
  // About eight chunks per thread: a thread slowed by others on the machine holds up one chunk, not a share.
  const chunkRows = Math.max(MIN_CHUNK_ROWS, Math.ceil(n / ((helpers + 1) * 8)));
  const chunks = Math.ceil(n / chunkRows);
  return {
    model: sharedModel,
    x: binFeatures(
      model,
      X,
      d,
      shared((b) => new Int32Array(b), X.length * 4),
    ),
    d,
    n,
    chunkRows,
    control: shared((b) => new Int32Array(b), (FLAGS + chunks) * 4),
    out: shared((b) => new Float64Array(b), n * model.outputs * 8),
  };
};

/** A worker stopped: every chunk not marked done is scored here (scoring twice writes the same values). */
const scoreUnfinishedChunks = (job: ScoringJob, chunks: number) => {
  for (let chunk = 0; chunk < chunks; chunk++)
    if (Atomics.load(job.control, FLAGS + chunk) === 0) scoreChunk(job, chunk);
};

/**
 * A pool of `threads` threads in all (this one included): `threads - 1` workers, started on the
 * first batch of at least `2 × 256` rows. One thread (or fewer rows) scores on this thread alone.
 */
export const scoringPool = (threads: number): ScoringPool => {
  const workers: (Worker | null)[] = Array.from({ length: Math.max(0, threads - 1) }, () => null);
  /** Per started worker: settles when it has loaded (its first message) or stopped. */
  const ready = new Map<Worker, Promise<void>>();
  const sharedModels = new WeakMap<CompiledGbdt, CompiledGbdt>();
  /** Called when a worker finishes its part of a batch or stops: batches in flight look again. */
  const wake = new Set<() => void>();
  const wakeAll = () => {
    for (const w of wake) w();
  };
  let busy = 0;
  /** Workers stopped so far: a batch that sees this move scores what is left on this thread. */
  let lost = 0;
  let closed = false;

  const start = (slot: number) => {
    const worker = mlWorker('scoringWorker');
    if (busy === 0) worker.unref();
    const stopped = () => {
      if (workers[slot] === worker) workers[slot] = null;
      ready.delete(worker);
      lost++;
      wakeAll();
    };
    worker.on('message', wakeAll);
    worker.once('error', stopped);
    worker.once('exit', stopped);
    ready.set(
      worker,
      new Promise((resolve) => {
        worker.once('message', () => resolve());
        worker.once('exit', () => resolve());
      }),
    );
    workers[slot] = worker;
    return worker;
  };

  const scores = async (model: CompiledGbdt, X: Float64Array, n: number, d: number) => {
    const helpers = closed ? 0 : workers.length;
    if (helpers === 0 || n < 2 * MIN_CHUNK_ROWS) return compiledScores(model, X, n, d);
    let sharedModel = sharedModels.get(model);
    if (!sharedModel) sharedModels.set(model, (sharedModel = shareModel(model)));
    const job = jobOf(model, sharedModel, X, n, d, helpers);
    const chunks = Math.ceil(n / job.chunkRows);
    const lostBefore = lost;
    let woken: () => void = () => undefined;
    const wakeMe = () => woken();
    wake.add(wakeMe);
    if (busy++ === 0) for (const w of workers) w?.ref();
    try {
      for (let slot = 0; slot < workers.length; slot++) (workers[slot] ?? start(slot)).postMessage(job);
      scoreClaimedChunks(job);
      // Wait for chunks other threads claimed; if a worker stopped, what is not done is scored here.
      while (Atomics.load(job.control, DONE) < chunks) {
        if (lost !== lostBefore) {
          scoreUnfinishedChunks(job, chunks);
          break;
        }
        await new Promise<void>((resolve) => (woken = resolve));
      }
      return job.out;
    } finally {
      wake.delete(wakeMe);
      if (--busy === 0) for (const w of workers) w?.unref();
    }
  };

  return {
    scores,
    warm: async () => {
      if (closed) return;
      const started = workers.map((w, slot) => w ?? start(slot));
      await Promise.all(started.map((w) => ready.get(w)));
    },
    close: async () => {
      closed = true;
      await Promise.all(workers.map((w) => w?.terminate()));
    },
  };
};
