/**
 * Coarse training progress. `done` of `total` (always 100) rises monotonically over the whole
 * training, across phases; each phase owns a fixed share. A report is sent only when the phase
 * changes or `done` has risen by at least 6, so a training sends twenty at most.
 */
type TrainingPhase = 'reading' | 'encoding' | 'training' | 'calibrating';
export type TrainingProgress = { phase: TrainingPhase; done: number; total: number };
export type OnProgress = (progress: TrainingProgress) => void;

const SHARES: Record<TrainingPhase, [number, number]> = {
  reading: [0, 5],
  encoding: [5, 15],
  training: [15, 90],
  calibrating: [90, 100],
};
const STEP = 6;

export type ProgressReporter = (phase: TrainingPhase, fraction: number) => void;

export const progressReporter = (onProgress?: OnProgress): ProgressReporter => {
  if (!onProgress) return () => undefined;
  let lastPhase: TrainingPhase | null = null;
  let lastDone = -1;
  return (phase, fraction) => {
    const [from, to] = SHARES[phase];
    const done = Math.max(lastDone, Math.floor(from + (to - from) * Math.min(1, Math.max(0, fraction))));
    const isFinal = phase === 'calibrating' && done === 100;
    if (phase === lastPhase && done - lastDone < STEP && !(isFinal && done > lastDone)) return;
    if (done < lastDone) return;
    lastPhase = phase;
    lastDone = done;
    onProgress({ phase, done, total: 100 });
  };
};
