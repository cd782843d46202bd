import { verifyWholeLog } from '../audit/ledger';
import { loadConfig } from '../config';
import { openEventLog } from '../eventlog/open';
import { loadOrCreateSigningKey } from '../ledger';
import { systemClock } from '../shared/time';

/**
 * `npm run verify`: recomputes the log's hash tree from the events and checks every signed
 * checkpoint. Exit 0 on an intact log; 1 naming the first event that fails (edited, deleted,
 * inserted or reordered); 2 when the check could not run. Reads only the log (the service may run).
 */
const main = async () => {
  const config = loadConfig(process.env);
  const key = loadOrCreateSigningKey(config.ledger.signingKey);
  const log = await openEventLog({ url: config.eventStoreUrl, dataDir: config.dataDir, clock: systemClock });
  try {
    const started = Date.now();
    const result = await verifyWholeLog(
      log,
      [key.publicKey, ...config.ledger.trustedKeys],
      config.ledger.origin,
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (result.ok) {
      process.stdout.write(
        `log intact: ${result.events} events, root ${result.rootHash}, ${result.checkpointsVerified} checkpoints verified` +
          (result.uncheckpointed
            ? `, ${result.uncheckpointed} events after the last checkpoint (not yet signed)`
            : '') +
          ` (${seconds} s)\n`,
      );
      for (const w of result.warnings) process.stdout.write(`warning: ${w}\n`);
      return 0;
    }
    process.stdout.write(
      `log NOT intact: ${result.problem} at leaf ${result.leafIndex}` +
        (result.position !== null ? `, position ${result.position}` : '') +
        (result.afterPosition !== null
          ? ` (everything up to position ${result.afterPosition} verified)`
          : '') +
        `${result.exact ? '' : ' (or a later event before the failing checkpoint)'}: ${result.detail}\n`,
    );
    return 1;
  } finally {
    await log.close();
  }
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`verify failed to run: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
