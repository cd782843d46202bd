import { ProjectionBehind } from './failures';

/** Remembers which positions were applied, so a writer can wait for exactly its own events. */
export class AppliedPositions {
  private readonly recent = new Set<bigint>();
  /** Every position below this was applied or never existed. */
  private floor = 0n;
  private top = 0n;

  add(position: bigint) {
    this.recent.add(position);
    if (position > this.top) this.top = position;
    if (this.recent.size > 20_000) {
      const sorted = [...this.recent].sort((a, b) => (a < b ? -1 : 1));
      for (const p of sorted.slice(0, 10_000)) this.recent.delete(p);
      this.floor = sorted[10_000] ?? this.floor;
    }
  }
  has(position: bigint) {
    return position < this.floor || this.recent.has(position);
  }
  reset(floor: bigint) {
    this.recent.clear();
    this.floor = floor;
    this.top = floor > 0n ? floor - 1n : 0n;
  }
  /** The highest position applied (or known to be, below the floor); 0 when none. */
  get highest() {
    return this.top;
  }
}

type Waiter = { resolve: () => void; reject: (error: Error) => void };

/** Writers waiting for their own events to reach the read model, by position. */
export class PositionWaiters {
  private readonly waiting = new Map<bigint, Waiter[]>();

  /** Resolves when `reached(position)`; rejects with ProjectionBehind after `timeoutMs`. */
  wait(position: bigint, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const forget = () => {
        clearTimeout(timeout);
        const list = this.waiting.get(position)?.filter((w) => w !== waiter) ?? [];
        if (list.length) this.waiting.set(position, list);
        else this.waiting.delete(position);
      };
      const timeout = setTimeout(() => {
        forget();
        reject(new ProjectionBehind(position, timeoutMs));
      }, timeoutMs);
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timeout);
          resolve();
        },
        reject: (error) => {
          forget();
          reject(error);
        },
      };
      this.waiting.set(position, [...(this.waiting.get(position) ?? []), waiter]);
    });
  }

  /** Whether anyone waits. */
  any() {
    return this.waiting.size > 0;
  }

  reached(position: bigint) {
    const waiters = this.waiting.get(position);
    if (!waiters) return;
    this.waiting.delete(position);
    for (const w of waiters) w.resolve();
  }

  /** Every waiter fails now (the read model stopped at an event it cannot apply). */
  rejectAll(reason: (position: bigint) => Error) {
    for (const [position, waiters] of [...this.waiting]) for (const w of waiters) w.reject(reason(position));
  }

  /** Every waiter is let go (the process is stopping). */
  releaseAll() {
    for (const [, waiters] of this.waiting) for (const w of waiters) w.resolve();
    this.waiting.clear();
  }
}
