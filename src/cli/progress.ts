import { Presets, SingleBar } from 'cli-progress';
import { watchCatchUp, type CatchUpProgress } from '../projection/catchUpProgress';

type ProgressOptions = {
  /** Lines at most this often (a terminal's bar is redrawn as the work goes). */
  readonly everyMs: number;
  /**
   * Nothing at all for a run that ends sooner than this (neither bar nor lines): a quick run's
   * output stays what it was. 0: the bar from the start, and a last line in any case.
   */
  readonly quietMs?: number;
};

/**
 * A long run's progress on stderr, as the CLIs show it (`npm run replay`, `npm run verify`): a
 * progress bar on a terminal; otherwise a line at most every `everyMs` (CI logs, pipes) and a last
 * one at the end, each with the events done, of how many, the rate and the time left. `counted`
 * subscribes to the work done (`watchCatchUp`); the function returned ends the display.
 */
export const progressOf = (
  counted: Parameters<typeof watchCatchUp>[0],
  total: number,
  label: string,
  { everyMs, quietMs = 0 }: ProgressOptions,
) => {
  const interactive = process.stderr.isTTY === true;
  const started = Date.now();
  const bar = new SingleBar(
    {
      format: `${label} [{bar}] {percentage}% {value}/{total} events, {rate} events/s, {eta_formatted} left`,
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  let barShown = false;
  let lastLine: number | null = null;
  const showBar = () => {
    if (barShown || Date.now() - started < quietMs) return barShown;
    bar.start(Math.max(total, 1), 0, { rate: 0 });
    return (barShown = true);
  };
  if (interactive) showBar();
  const line = (p: CatchUpProgress) => {
    lastLine = p.applied;
    process.stderr.write(
      `${label}: ${total > 0 ? Math.floor((p.applied / total) * 100) : 100}% (${p.applied}/${total} events, ${p.eventsPerSecond} events/s, about ${p.secondsLeft ?? '?'} s left)\n`,
    );
  };
  const watch = watchCatchUp(
    counted,
    total,
    (p) => {
      if (interactive) {
        if (showBar()) bar.update(p.applied, { rate: p.eventsPerSecond });
      } else if (Date.now() - started >= quietMs) line(p);
    },
    interactive ? 0 : everyMs,
  );
  return () => {
    const final = watch.stop();
    if (interactive) {
      if (barShown) bar.stop();
    } else if (Date.now() - started >= quietMs && lastLine !== final.applied) line(final);
  };
};
