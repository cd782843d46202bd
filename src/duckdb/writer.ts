import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { bytesOfSize } from '../shared/sizes';

/** Where the database lives, what it may read, and the engine's own limits. */
export type InstanceOptions = {
  /** A file path, or ':memory:'. */
  file: string;
  /** Files the SQL endpoint may read (uploads); everything else is off limits. */
  allowedDirectory: string;
  threads?: number;
  /** DuckDB's `memory_limit` (e.g. `2GiB`): past it, work spills to `tempDirectory` or fails. */
  memoryLimit?: string;
  /** Where DuckDB spills what does not fit in memory. */
  tempDirectory?: string;
};

/** The block size (bytes) of a read model's file when it is made: see `openInstanceWithWriter`. */
export const READ_MODEL_BLOCK_SIZE = 64 * 1024;

/**
 * Opens the database and its one writer connection (the projection runner's), its configuration
 * locked: from then on user SQL can neither widen file access nor change settings. Answers
 * DuckDB's memory limit in bytes as well (Infinity when it names none this can read).
 */
export const openInstanceWithWriter = async (options: InstanceOptions) => {
  if (options.file !== ':memory:')
    fs.mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
  fs.mkdirSync(options.allowedDirectory, { recursive: true });
  if (options.tempDirectory) fs.mkdirSync(options.tempDirectory, { recursive: true });
  const instance = await DuckDBInstance.create(options.file, {
    // Set when the instance is made, before the configuration is locked below: one heavy query
    // (a cross join of two large series) took gigabytes, and ten of them starved the process.
    ...(options.memoryLimit ? { memory_limit: options.memoryLimit } : {}),
    ...(options.tempDirectory ? { temp_directory: path.resolve(options.tempDirectory) } : {}),
    // No network here and no reason to fetch code at run time: unknown extensions fail fast.
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Bulk loads and scans want every core; many small queries are served by the pooled
    // connections (and the answer cache) rather than by intra-query parallelism.
    threads: String(options.threads ?? Math.max(1, os.availableParallelism())),
    // Memory comes back after a heavy query: the allocator's background threads return freed pages
    // to the system. Measured (`npm run bench`, memory: a GROUP BY of 3M string keys over 20M rows
    // through the service, idle 201-209 MiB): back under 1.5 × idle in 1 s with them (peak 439 MiB),
    // in 45 s without (peak 598 MiB); in bare DuckDB, 20 s idle left 225 MiB without, 87 with.
    allocator_background_threads: 'true',
    // DuckDB writes its log into the database file once the log passes this size (its default is
    // 16 MB), and that checkpoint's cost grows with the database: a knowledge base growing to a
    // million chunks (each PUT of 2,000 documents about 30 MB of log) checkpointed at every PUT,
    // its commit 0.5-1.4 s and now and then 10 s at 1M chunks. At 256 MB: about 0.3 s a PUT
    // (1 GB: 0.1 s, but a longer log to replay after a crash). bench/kb.bench.ts, docs/benchmarks.md.
    checkpoint_threshold: '256MB',
    // A new database file's blocks: 64 KiB, not DuckDB's 256 KiB. A table's column data takes whole
    // blocks, and the read model holds many small tables (four per knowledge base, one per uploaded
    // file): the replay bench's 100,000-event log (636 knowledge bases) made an 862 MiB file with
    // 256 KiB blocks and a 262 MiB one with 64 KiB, its rebuild ran 1.4-1.8x as fast and its close's
    // checkpoint took 8-14 s instead of 16-22 (alternated, load 4-9). Large scans were not slower
    // (a GROUP BY over 3M rows, a cosine scan of 100k FLOAT[384], knowledge base search at 100k
    // chunks against its brute-force baseline); with 16 KiB the GROUP BY took 1.5-1.7x as long.
    // docs/benchmarks.md. A file made before keeps the block size it was made with.
    default_block_size: String(READ_MODEL_BLOCK_SIZE),
  });
  const writer = await instance.connect();
  // These switches only take effect as statements, in this order (stack-notes §7). Once the
  // configuration is locked, user SQL can neither widen file access nor change settings.
  const allowed = path.resolve(options.allowedDirectory).replace(/'/g, "''") + '/';
  await writer.run(`SET allowed_directories = ['${allowed}']`);
  await writer.run('SET enable_external_access = false');
  await writer.run('SET lock_configuration = true');
  const engineMemoryLimit = bytesOfSize(
    String((await writer.runAndReadAll("SELECT current_setting('memory_limit') AS l")).getRows()[0]?.[0]),
  );
  return { instance, writer, engineMemoryLimit };
};
