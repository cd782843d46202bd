/**
 * What a long catch-up says of itself (`watchCatchUp`): the replay CLI draws it, the service logs
 * it at a start far behind the log. Given batches applied at known times, then the reports.
 */
import type { RecordedEvent } from '../../events';
import { watchCatchUp, type CatchUpProgress } from '../../src/projection/catchUpProgress';

/** Batches of `n` stand-in events (only their count is read). */
const batch = (n: number) => Array.from({ length: n }, () => ({}) as RecordedEvent);

const world = () => {
  let at = 1_000;
  const listeners = new Set<(events: readonly RecordedEvent[]) => void>();
  const onApplied = (listener: (events: readonly RecordedEvent[]) => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  return {
    onApplied,
    listeners,
    now: () => at,
    apply: (n: number, afterMs: number) => {
      at += afterMs;
      for (const l of listeners) l(batch(n));
    },
  };
};

describe('watchCatchUp', () => {
  it('reports at most once per interval, with the rate so far and the time left at it', () => {
    const w = world();
    const reports: CatchUpProgress[] = [];
    const watch = watchCatchUp(w.onApplied, 10_000, (p) => reports.push(p), 5_000, w.now);
    w.apply(1_000, 1_000); // 1 s: too soon
    w.apply(1_000, 4_000); // 5 s: 2,000 at 400/s, 8,000 left: 20 s
    w.apply(1_000, 1_000); // 6 s: too soon after the last
    expect(reports).toEqual([{ applied: 2_000, total: 10_000, eventsPerSecond: 400, secondsLeft: 20 }]);
    expect(watch.stop()).toEqual({ applied: 3_000, total: 10_000, eventsPerSecond: 500, secondsLeft: 14 });
  });

  it('stops listening when stopped, and says nothing of the time left before anything is applied', () => {
    const w = world();
    const watch = watchCatchUp(w.onApplied, 5, () => undefined, 0, w.now);
    expect(w.listeners.size).toBe(1);
    expect(watch.stop()).toEqual({ applied: 0, total: 5, eventsPerSecond: 0, secondsLeft: null });
    expect(w.listeners.size).toBe(0);
  });
});
