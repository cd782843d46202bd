import crypto from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LogCursor } from '../eventlog/types';
import { quoteString } from '../shared/quoting';
import { SECRET_RULES_VERSION } from '../shared/secrets';
import { createTableSql } from './rows';
import type { SchemaProjection, TableProjection } from './types';

/** One row: the log position the tables include, and the fingerprint of the definitions that made them. */
export const CHECKPOINT_TABLE = '_mindledger_checkpoint';

/**
 * What the read model's tables were built by: every table definition, every schema projection's
 * version, the secret-masking rules and the events passed over (PROJECTION_SKIP). A different fingerprint at start means a rebuild.
 */
export const readModelFingerprint = (
  projections: readonly TableProjection[],
  schemaProjections: readonly SchemaProjection[],
  skipped: readonly string[] = [],
) =>
  crypto
    .createHash('sha256')
    .update(
      [
        ...projections.map((p) => `${createTableSql(p)}|${p.key}`),
        ...schemaProjections.map((p) => `${p.name}@${p.version}`),
        // Tables hold secrets masked: new masking rules must not leave old rows showing more.
        `secrets@${SECRET_RULES_VERSION}`,
        // Events passed over by the operator's word: the same list on a rebuild, the same tables.
        ...(skipped.length > 0 ? [`skip@${[...skipped].sort().join(',')}`] : []),
      ].join('\n'),
    )
    .digest('hex')
    .slice(0, 16);

/** The checkpoint row as stored. */
type StoredCheckpoint = {
  position: bigint;
  transaction_id: string | null;
  fingerprint: string;
  event_id: string | null;
};

/** The checkpoint row the tables hold (none before the tables were prepared). */
export const storedCheckpoint = async (w: DuckDBConnection): Promise<StoredCheckpoint | undefined> => {
  const rows = (
    await w.runAndReadAll(`SELECT position, transaction_id, fingerprint, event_id FROM ${CHECKPOINT_TABLE}`)
  ).getRowObjectsJS() as StoredCheckpoint[];
  return rows[0];
};

/** The statement that moves the checkpoint to `cursor`, the event `eventId` (run in the batch's transaction). */
export const checkpointUpdateSql = (cursor: LogCursor, eventId: string | null) =>
  `UPDATE ${CHECKPOINT_TABLE} SET position = ${cursor.position}, transaction_id = ${
    cursor.transactionId === null ? 'NULL' : quoteString(cursor.transactionId)
  }, event_id = ${eventId === null ? 'NULL' : quoteString(eventId)}`;
