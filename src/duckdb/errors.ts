/** DuckDB's error when its memory limit (DUCKDB_MEMORY_LIMIT) is reached, by its message. */
export const isOutOfMemoryMessage = (message: string) => /^Out of Memory Error/.test(message);
