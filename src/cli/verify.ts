import fs from 'node:fs';
import { defaultWitnesses, verifyStoredLog, type VerifyWatch } from '../audit/verifyStored';
import { loadConfig } from '../config';
import { messageOf } from '../shared/errors';
import { progressOf } from './progress';

const USAGE = 'usage: verify [--witness <dir>]... [--progress-every-ms <ms>]';

/** How often progress is shown on stderr by default: a run that ends sooner shows none. */
const PROGRESS_EVERY_MS = 5_000;

/**
 * `--witness <dir>` (repeatable, or `--witness=<dir>`): the witnesses to compare the log with;
 * `--progress-every-ms <ms>`: how often progress is shown (0: at every report, and a last line).
 */
const argsOf = (args: readonly string[]) => {
  const dirs: string[] = [];
  let progressEveryMs = PROGRESS_EVERY_MS;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--witness') {
      const dir = args[++i];
      if (!dir) throw new Error('--witness needs a directory (or a witness file)');
      dirs.push(dir);
    } else if (arg.startsWith('--witness=')) dirs.push(arg.slice('--witness='.length));
    else if (arg === '--progress-every-ms') {
      const ms = Number(args[++i]);
      if (!Number.isInteger(ms) || ms < 0)
        throw new Error(`--progress-every-ms needs milliseconds (${USAGE})`);
      progressEveryMs = ms;
    } else throw new Error(`Unknown argument ${arg} (${USAGE})`);
  }
  return { witnesses: dirs.length ? dirs : undefined, progressEveryMs };
};

/** Events between two reports of the verification: a report is a call and a clock read. */
const REPORT_EVERY_EVENTS = 1_000;

/**
 * The verification's progress as `npm run replay` shows its own (src/cli/progress.ts), on stderr:
 * stdout keeps the verdict alone.
 */
const progressShown =
  (everyMs: number): VerifyWatch =>
  (total) => {
    // The reports count events verified so far; the display counts what each report adds.
    let listener: ((done: { length: number }) => void) | undefined;
    let verified = 0;
    const stop = progressOf(
      (l) => {
        listener = l;
        return () => (listener = undefined);
      },
      total,
      'verify',
      { everyMs, quietMs: everyMs },
    );
    return {
      every: REPORT_EVERY_EVENTS,
      onProgress: (p) => {
        listener?.({ length: p.events - verified });
        verified = p.events;
      },
      stop,
    };
  };

/**
 * `npm run verify [-- --witness <dir>...] [--progress-every-ms <ms>]`: recomputes the log's hash
 * tree from the events and checks every signed checkpoint, and every checkpoint the witnesses hold
 * (by default LEDGER_WITNESS_DIR, when it exists): a witnessed checkpoint missing from the log, a
 * log shorter than a witnessed size, or a witnessed root its leaves do not rebuild fails. Exit 0 on
 * an intact log; 1 naming the first event that fails (edited, deleted, inserted or reordered) or
 * the missing checkpoint; 2 when the check could not run. Reads the log, and the leaf hashes a
 * stopped service's read model recorded (so a changed event is named by its position; with the
 * service running, by the checkpoints around it). Changes nothing. A run longer than 5 s says on
 * stderr how far it has come every 5 s (events verified, of how many, the rate and the time left;
 * a bar on a terminal).
 */
const main = async () => {
  const config = loadConfig(process.env);
  const args = argsOf(process.argv.slice(2));
  const witnesses = args.witnesses ?? defaultWitnesses(config);
  for (const w of witnesses) if (!fs.existsSync(w)) throw new Error(`No witness at ${w}`);
  const started = Date.now();
  const result = await verifyStoredLog(config, witnesses, progressShown(args.progressEveryMs));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.ok) {
    process.stdout.write(
      `log intact: ${result.events} events, root ${result.rootHash}, ${result.checkpointsVerified} checkpoints verified` +
        (result.uncheckpointed
          ? `, ${result.uncheckpointed} events after the last checkpoint (not yet signed)`
          : '') +
        (witnesses.length
          ? `, ${result.witnesses.checkpoints} witnessed checkpoints matched (${result.witnesses.sources.join(', ')})`
          : ', no witness (keep one: LEDGER_WITNESS_DIR, --witness <dir>)') +
        ` (${seconds} s)\n`,
    );
    for (const w of result.warnings) process.stdout.write(`warning: ${w}\n`);
    return 0;
  }
  process.stdout.write(
    `log NOT intact: ${result.problem} at leaf ${result.leafIndex}` +
      (result.position !== null ? `, position ${result.position}` : '') +
      (result.afterPosition !== null ? ` (everything up to position ${result.afterPosition} verified)` : '') +
      `${result.exact ? '' : ' (or a later event before the failing checkpoint)'}: ${result.detail}\n`,
  );
  if (!result.exact && result.leafHashesUnread)
    process.stdout.write(
      `(the read model's leaf hashes, which name the exact event, could not be read: ${result.leafHashesUnread}; stop the service and verify again)\n`,
    );
  return 1;
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`verify failed to run: ${messageOf(error)}\n`);
    process.exit(2);
  },
);
