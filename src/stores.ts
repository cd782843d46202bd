import type { Logger } from 'pino';
import { allProjections, fileTablesProjection, knowledgeBaseContentProjection } from '../projections';
import { KB_SCHEMA } from './engines/search/layout';
import type { Config } from './config';
import { openDuck } from './duckdb/database';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { survivingDrops } from './eventlog/postgresConnections';
import { openEventLog } from './eventlog/open';
import {
  FileDataKeyStore,
  loadOrCreateMasterKey,
  loadOrCreateMasterKeyFile,
  MASTER_KEY_FILE_PREFIX,
  PostgresDataKeyStore,
  SecretVault,
  type DataKeyStore,
} from './ledger/shredding';
import { withSealedSecrets } from './ledger/sealedLog';
import { openBlobStore } from './storage/blobs';
import { FILES_SCHEMA } from './shared/names';
import { digestOf } from './projection/digest';
import { CHECKPOINT_TABLE, ProjectionRunner } from './projection/runner';
import type { Clock } from './shared/time';

/**
 * The log, the read model and the blobs, with the projection runner between them: what the service
 * and `npm run replay` both open. The runner is not started: the caller starts or rebuilds it.
 */
export const openStores = async (
  config: Config,
  logger: Logger,
  clock: Clock,
  options: { poll: boolean },
) => {
  const storedLog = await openEventLog({ url: config.eventStoreUrl, dataDir: config.dataDir, clock });
  const keyPool =
    storedLog.kind === 'postgres'
      ? survivingDrops(new pg.Pool({ connectionString: config.eventStoreUrl, max: 2 }))
      : undefined;
  const keys: DataKeyStore = keyPool
    ? await PostgresDataKeyStore.open(keyPool)
    : new FileDataKeyStore(path.join(config.dataDir, 'keys'));
  const vault = new SecretVault(
    keys,
    loadOrCreateMasterKey(config.ledger.masterKey),
    config.ledger.retiredMasterKeys.map((k) => {
      // An earlier key must exist: it is named to open what it wrapped, never made anew. A key file
      // is `file:<path>` (a bare path that is not a key is still read as a file, as it once was).
      const file = k.startsWith(MASTER_KEY_FILE_PREFIX) ? k.slice(MASTER_KEY_FILE_PREFIX.length) : undefined;
      if (file !== undefined || (!/^[A-Za-z0-9+/_=-]{43,44}$/.test(k) && fs.existsSync(k))) {
        if (!fs.existsSync(file ?? k))
          throw new Error(`LEDGER_RETIRED_MASTER_KEYS names ${file ?? k}, which is not a file`);
        return loadOrCreateMasterKeyFile(file ?? k);
      }
      try {
        return loadOrCreateMasterKey(k);
      } catch {
        throw new Error(
          `LEDGER_RETIRED_MASTER_KEYS names ${k}, which is neither a base64 key nor a file (file:<path>)`,
        );
      }
    }),
  );
  try {
    await vault.checkMasterKey();
  } catch (error) {
    await storedLog.close();
    await keyPool?.end();
    throw error;
  }
  const log = withSealedSecrets(storedLog, vault);
  const duck = await openDuck({
    file: config.duckdbFile,
    allowedDirectory: `${config.dataDir}/files`,
    threads: config.duckdbThreads,
    readers: config.duckdbReaders,
    acquireTimeoutMs: config.duckdbAcquireTimeoutMs,
    sqlReaders: config.sqlMaxConcurrent,
    outsideReaders: config.sqlMaxWaitingOutside,
    memoryLimit: config.duckdbMemoryLimit,
    tempDirectory: config.duckdbTempDirectory,
    maxValueBytes: config.sqlMaxValueBytes,
    processMemoryLimit: config.sqlMaxProcessMemory,
  });
  const blobs = await openBlobStore(
    config.dataDir,
    log.kind === 'postgres' ? config.eventStoreUrl : undefined,
  );
  const projections = new ProjectionRunner(
    duck,
    log,
    allProjections,
    logger,
    {
      batchSize: config.projectionBatchSize,
      batchPauseMs: config.projectionBatchPauseMs,
      progressFromEvents: config.projectionProgressFromEvents,
      progressEveryMs: config.projectionProgressEveryMs,
      skip: config.projectionSkip,
      pollMs: options.poll ? config.projectionPollMs : 0,
      follow: options.poll && config.projectionListen,
    },
    [fileTablesProjection(blobs), knowledgeBaseContentProjection(blobs)],
  );
  return {
    log,
    vault,
    duck,
    blobs,
    projections,
    /** Row counts and hashes of every read-model table at the position it includes. */
    digest: () =>
      digestOf(duck, { checkpointTable: CHECKPOINT_TABLE, schemas: ['main', FILES_SCHEMA, KB_SCHEMA] }),
    close: async () => {
      await projections.stop();
      await log.close();
      await keyPool?.end();
      await blobs.close();
      await duck.close();
    },
  };
};
