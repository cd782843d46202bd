import { eventLeafHash, MerkleFrontier, type Hash, type LeafHashes } from '../ledger';
import type { Duck } from '../duckdb/database';
import { columns } from '../projection/columns';
import type { RowStore, TableProjection } from '../projection/types';

/**
 * The log's hash tree as part of the read model: every event a leaf, in the order the log is tailed
 * (the order every replica and every rebuild applies it, so they all hold the same tree). The
 * frontier (≤ log2 n + 1 hashes) is kept beside the leaves, so the root at any moment is one row.
 */
export const ledgerTreeTable: TableProjection = {
  table: 'ledger_tree',
  // Written with every batch (by ledger_leaves): other answers are kept through it (readVersions.ts).
  activity: true,
  key: 'ID',
  columns: columns('ID VARCHAR, SIZE BIGINT, ROOT_HASH VARCHAR, LAST_POSITION BIGINT, FRONTIER JSON'),
  // Written by ledger_leaves, which applies every event.
  handles: [],
  apply: () => undefined,
};

const TREE = 'tree';

/**
 * The tree as a batch grows it, keyed by the batch's row store (one per batch): restored from the
 * tree row once per batch, and the tree row written once at its end. Per event, restoring, taking
 * the root (log2 n hashes) and serialising the frontier cost five times the leaf hash itself.
 */
const growing = new WeakMap<RowStore, { frontier: MerkleFrontier; lastPosition: bigint }>();

export const ledgerLeavesTable: TableProjection = {
  table: 'ledger_leaves',
  key: 'LEAF_INDEX',
  columns: columns('LEAF_INDEX BIGINT, POSITION BIGINT, LEAF_HASH VARCHAR'),
  handles: 'all',
  apply: async (event, rows, lookup) => {
    let batch = growing.get(rows);
    if (!batch) {
      const current = await lookup(ledgerTreeTable.table).get(TREE);
      const frontier = current
        ? MerkleFrontier.restore(
            typeof current.FRONTIER === 'string' ? JSON.parse(current.FRONTIER) : current.FRONTIER,
          )
        : MerkleFrontier.empty();
      batch = { frontier, lastPosition: event.meta.position };
      growing.set(rows, batch);
    }
    const leaf = eventLeafHash(event);
    const index = batch.frontier.size;
    batch.frontier.append(leaf);
    batch.lastPosition = event.meta.position;
    rows.insert({
      LEAF_INDEX: BigInt(index),
      POSITION: event.meta.position,
      LEAF_HASH: leaf.toString('hex'),
    });
  },
  finish: (rows, lookup) => {
    const batch = growing.get(rows);
    if (!batch) return;
    growing.delete(rows);
    const { frontier, lastPosition } = batch;
    lookup(ledgerTreeTable.table).put({
      ID: TREE,
      SIZE: BigInt(frontier.size),
      ROOT_HASH: frontier.root().toString('base64'),
      LAST_POSITION: lastPosition,
      FRONTIER: JSON.stringify(frontier.snapshot()),
    });
  },
};

export type TreeHead = { size: number; rootHash: string; lastPosition: bigint | null };

const num = (v: unknown) => Number(v as bigint | number);

/** The tree as the read model holds it now. */
export const treeHead = async (duck: Duck): Promise<TreeHead> => {
  const rows = (await duck.query('SELECT SIZE, ROOT_HASH, LAST_POSITION FROM ledger_tree WHERE ID = ?', [
    TREE,
  ])) as { SIZE: bigint; ROOT_HASH: string; LAST_POSITION: bigint }[];
  const row = rows[0];
  return row
    ? { size: num(row.SIZE), rootHash: row.ROOT_HASH, lastPosition: BigInt(row.LAST_POSITION) }
    : { size: 0, rootHash: '', lastPosition: null };
};

/** The leaf index of the event at a global position, if the tree holds it. */
export const leafOfPosition = async (duck: Duck, position: bigint) => {
  const rows = (await duck.query('SELECT LEAF_INDEX, LEAF_HASH FROM ledger_leaves WHERE POSITION = ?', [
    position,
  ])) as { LEAF_INDEX: bigint; LEAF_HASH: string }[];
  return rows[0] ? { index: num(rows[0].LEAF_INDEX), hash: rows[0].LEAF_HASH } : undefined;
};

/** The recorded leaf hashes, for proofs (read from the table in ranges). */
export const duckLeafHashes = (duck: Duck): LeafHashes => {
  const range = async (from: number, to: number): Promise<Hash[]> => {
    if (to <= from) return [];
    const rows = (await duck.query(
      'SELECT LEAF_HASH FROM ledger_leaves WHERE LEAF_INDEX >= ? AND LEAF_INDEX < ? ORDER BY LEAF_INDEX',
      [BigInt(from), BigInt(to)],
    )) as { LEAF_HASH: string }[];
    return rows.map((r) => Buffer.from(r.LEAF_HASH, 'hex'));
  };
  return {
    size: async () => (await treeHead(duck)).size,
    get: async (index) => {
      const [hash] = await range(index, index + 1);
      if (!hash) throw new Error(`No leaf ${index} is recorded`);
      return hash;
    },
    range,
  };
};
