import crypto from 'node:crypto';
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
