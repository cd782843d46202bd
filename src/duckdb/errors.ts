/** DuckDB's error when its memory limit (DUCKDB_MEMORY_LIMIT) is reached, by its message. */
export const isOutOfMemoryMessage = (message: string) => /^Out of Memory Error/.test(message);

/**
 * Whether a statement of the projection writer failed for want of memory: DuckDB's out-of-memory
 * error, or a commit that could not pin or allocate a block (`TransactionContext Error: Failed to
 * commit: failed to pin block of size 256.0 KiB (296.9 MiB/300.0 MiB used)`, seen here while SQL
 * queries held the memory). Not the batch's fault: it is tried again once there is room.
 */
export const isMemoryShortageMessage = (message: string) =>
  isOutOfMemoryMessage(message) ||
  /^TransactionContext Error: Failed to commit: failed to (pin|allocate)/.test(message);

/**
 * DuckDB's words once it has invalidated the database (after a FATAL error, e.g. a rollback that
 * met the memory limit): every later statement of the instance fails until it is opened again.
 */
export const isInvalidatedMessage = (message: string) =>
  /database has been invalidated|^FATAL Error/.test(message);
