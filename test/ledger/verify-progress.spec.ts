/**
 * `npm run verify` over a long log says how far it has come, on stderr: events verified, of how
 * many, the rate and the time left, at most every 5 s, and nothing for a run that ends sooner;
 * stdout keeps the verdict alone. `--progress-every-ms 0` shows every report, so a short log stands
 * in for a long one.
 */
import type { MindledgerEvent } from '../../events';
import { projectStream } from '../../src/shared/projectState';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { verifyCli } from './logStore';

// Each run of the verify program starts a process (tsx).
const SLOW = 120_000;

/**
 * `streams` × 100 project events appended to the app's log (created and deleted in turn, as
 * bench/sql.bench.ts seeds a log), then the app stopped: its stop signs them all.
 */
const givenLongLog = async (t: TestApp, streams: number) => {
  const at = new Date().toISOString();
  for (let s = 0; s < streams; s++) {
    const name = `p${s}`;
    const events: MindledgerEvent[] = Array.from({ length: 100 }, (_, k) =>
      k % 2 === 0
        ? { type: 'ProjectCreated', data: { name, createdAt: at } }
        : { type: 'ProjectDeleted', data: { projectId: k, name, deletedAt: at } },
    );
    await t.running.ctx.log.append(projectStream(name), events, 0n);
  }
  await t.stop();
};

const PROGRESS_LINE = /^verify: (\d+)% \((\d+)\/(\d+) events, \d+ events\/s, about (?:\d+|\?) s left\)$/gm;

describe.each(storeKinds)('npm run verify shows its progress (%s)', (store) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(store, { LEDGER_CHECKPOINT_ON_STOP: 'true' });
  });
  afterEach(() => t?.dispose());

  it(
    'reports events verified, of how many, rate and time left on stderr; stdout holds the verdict alone',
    async () => {
      await givenLongLog(t, 25);

      const shown = await verifyCli(t, ['--progress-every-ms', '0']);

      expect(shown.code).toBe(0);
      const verdict = /^log intact: (\d+) events, /.exec(shown.stdout);
      expect(verdict).not.toBeNull();
      expect(shown.stdout).not.toMatch(/verify:/);
      const total = Number(verdict![1]);
      expect(total).toBeGreaterThan(2_500);
      const lines = [...shown.stderr.matchAll(PROGRESS_LINE)].map(([, percent, done, of]) => ({
        percent: Number(percent),
        done: Number(done),
        of: Number(of),
      }));
      // A report every 1,000 events, and the last at the end.
      expect(lines.length).toBeGreaterThanOrEqual(3);
      expect(lines.every((l) => l.of === total)).toBe(true);
      expect(lines.map((l) => l.done)).toEqual([...new Set(lines.map((l) => l.done))].sort((a, b) => a - b));
      expect(lines[0]!.done).toBeLessThan(total);
      expect(lines.at(-1)).toEqual({ percent: 100, done: total, of: total });

      // By default a line comes every 5 s: a run of a few thousand events ends long before.
      const quiet = await verifyCli(t);
      expect(quiet.code).toBe(0);
      expect(quiet.stdout).toMatch(new RegExp(`^log intact: ${total} events, `));
      expect(quiet.stderr).not.toMatch(/verify:/);
    },
    SLOW,
  );
});
