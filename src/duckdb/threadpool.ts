/**
 * Every DuckDB call of @duckdb/node-api runs on libuv's thread pool and holds a thread until
 * DuckDB returns: a query running for a minute holds one for a minute. The pool has 4 threads by
 * default, shared with the SQLite event log and file I/O, so four long queries stopped every other
 * read, write and upload of the process, whatever the reader pool kept free.
 *
 * Imported first by main.ts: libuv reads UV_THREADPOOL_SIZE once, when the pool first starts,
 * which under `node dist/src/main.js` is after this line (under tsx, whose loader reads files
 * first, it is too late: `npm run dev` keeps 4). The pool gets a thread per pooled reader, one
 * for the projection writer and four for the rest; an operator's own UV_THREADPOOL_SIZE wins.
 */
const LIBUV_DEFAULT = 4;
const OTHER_WORK = 4;

if (!process.env.UV_THREADPOOL_SIZE) {
  const readers = Number(process.env.DUCKDB_READERS);
  const wanted = (Number.isInteger(readers) && readers > 0 ? readers : 8) + 1 + OTHER_WORK;
  process.env.UV_THREADPOOL_SIZE = String(Math.min(1024, Math.max(LIBUV_DEFAULT, wanted)));
}

export {};
