import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Config } from '../config';
import { openEventLog } from '../eventlog/open';
import { loadOrCreateSigningKey, type Hash, type LeafHashes, type VerifyProgress } from '../ledger';
import { HASH_SIZE } from '../ledger/hashing';
import { systemClock } from '../shared/time';
import { verifyWholeLog } from './ledger';
import { messageOf } from '../shared/errors';

/**
 * The leaf hashes a stopped service's read model recorded (`ledger_leaves` in DUCKDB_FILE), read
 * without changing it; undefined when they cannot be read (no file yet, or a running service holds
 * it: then a failure is placed between checkpoints, not on its event).
 */
const recordedLeafHashes = async (
  file: string,
): Promise<{ leaves: LeafHashes; close: () => void } | { leaves: undefined; reason: string }> => {
  if (file === ':memory:' || !fs.existsSync(file))
    return { leaves: undefined, reason: `no read model at ${file}` };
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  } catch (error) {
    return { leaves: undefined, reason: messageOf(error) };
  }
  const connection = await instance.connect();
  const rows = async (sql: string, params: (bigint | string)[]) =>
    (await connection.runAndReadAll(sql, params)).getRowObjectsJS();
  const rowByRow = async (from: number, to: number): Promise<Hash[]> =>
    (
      await rows(
        'SELECT LEAF_HASH FROM ledger_leaves WHERE LEAF_INDEX >= ? AND LEAF_INDEX < ? ORDER BY LEAF_INDEX',
        [BigInt(from), BigInt(to)],
      )
    ).map((r) => Buffer.from(String(r.LEAF_HASH), 'hex'));
  // A range as one text (the hashes' hex in leaf order), decoded at once: a row object and a hex
  // decoding per leaf were a tenth of a verification. Row by row when a hash is not plain hex of
  // its size, so a damaged read model reads as it did.
  const range = async (from: number, to: number): Promise<Hash[]> => {
    if (to <= from) return [];
    const [joined] = await rows(
      "SELECT string_agg(LEAF_HASH, '' ORDER BY LEAF_INDEX) AS HASHES, count(*) AS N FROM ledger_leaves WHERE LEAF_INDEX >= ? AND LEAF_INDEX < ?",
      [BigInt(from), BigInt(to)],
    );
    const text = String(joined?.HASHES ?? '');
    const count = Number(joined?.N ?? 0);
    const bytes = Buffer.from(text, 'hex');
    if (bytes.length !== count * HASH_SIZE || text.length !== 2 * bytes.length) return rowByRow(from, to);
    return Array.from({ length: count }, (_, i) => bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
  };
  try {
    // The tree's size is what the read model applied: its leaves [0, size) are complete.
    const [tree] = await rows('SELECT SIZE FROM ledger_tree WHERE ID = ?', ['tree']);
    const size = tree ? Number(tree.SIZE as bigint) : 0;
    return {
      leaves: {
        size: () => size,
        get: async (index) => {
          const [hash] = await range(index, index + 1);
          if (!hash) throw new Error(`No leaf ${index} is recorded`);
          return hash;
        },
        range,
      },
      close: () => {
        connection.closeSync();
        instance.closeSync();
      },
    };
  } catch (error) {
    connection.closeSync();
    instance.closeSync();
    return { leaves: undefined, reason: messageOf(error) };
  }
};

/** What `npm run verify` compares the log with when no witness is named: LEDGER_WITNESS_DIR, if it exists. */
export const defaultWitnesses = (config: Config) =>
  [config.ledger.witnessDir].filter((d) => fs.existsSync(d));

/**
 * Follows a verification: told the events the log holds as it begins, then the verification's
 * reports (`every` events, and at the end); `stop` once it ends, however it ends.
 */
export type VerifyWatch = (total: number) => {
  readonly every: number;
  readonly onProgress: (progress: VerifyProgress) => void;
  readonly stop: () => void;
};

/**
 * What `npm run verify` runs: the whole log (EVENT_STORE_URL or DATA_DIR) checked against its signed
 * checkpoints and the witnesses (src/audit/ledger.ts, `verifyWholeLog`), with the leaf hashes the read
 * model recorded when they can be read, so a changed event is named by its own position.
 */
export const verifyStoredLog = async (
  config: Config,
  witnesses: readonly string[] = [],
  watch?: VerifyWatch,
) => {
  const key = loadOrCreateSigningKey(config.ledger.signingKey);
  const log = await openEventLog({ url: config.eventStoreUrl, dataDir: config.dataDir, clock: systemClock });
  const recorded = await recordedLeafHashes(config.duckdbFile);
  let watching: ReturnType<VerifyWatch> | undefined;
  try {
    watching = watch?.((await log.head()).events);
    const result = await verifyWholeLog(
      log,
      [key.publicKey, ...config.ledger.trustedKeys],
      config.ledger.origin,
      watching ? { onProgress: watching.onProgress, every: watching.every } : {},
      { witnesses, checkpointEvery: config.ledger.everyEvents, leafHashes: recorded.leaves },
    );
    return {
      ...result,
      /** Why a failure could only be placed between checkpoints (no recorded leaf hashes). */
      ...('reason' in recorded ? { leafHashesUnread: recorded.reason } : {}),
    };
  } finally {
    watching?.stop();
    if ('close' in recorded) recorded.close();
    await log.close();
  }
};
