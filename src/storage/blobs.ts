import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { inSchemaTurn } from '../shared/pgTurns';
import { keyedMutex } from '../eventlog/queue';

const PART = 4 * 1024 * 1024;

/**
 * Uploaded bytes, content-addressed by sha256 under DATA_DIR/files/blobs. With the log on
 * PostgreSQL the bytes are stored there too (in 4 MiB parts), so a process that never saw the
 * upload (or lost its disk) can still load the file when it replays the log.
 */
export type BlobStore = {
  readonly directory: string;
  pathOf(digest: string, format: string): string;
  /**
   * Runs `work` holding the blob's lock: in this process and, with the log on PostgreSQL, in every
   * process (an advisory lock). Bytes are only stored or removed under it, so a process storing a
   * blob and another removing the same bytes cannot interleave.
   */
  withBlob<T>(digest: string, work: (blob: LockedBlob) => Promise<T>): Promise<T>;
  /** Stores bytes that are never removed (model artifacts): `put` under the blob's lock. */
  put(tempPath: string, digest: string, format: string): Promise<string>;
  /** The local path of a blob, fetched from PostgreSQL first if this process lacks it. */
  ensureLocal(digest: string, format: string): Promise<string>;
  /** Like `ensureLocal`, but null when the bytes are nowhere (released, or lost). */
  findLocal(digest: string, format: string): Promise<string | null>;
  close(): Promise<void>;
};

type LockedBlob = {
  /** Moves a verified temporary file into place (and into PostgreSQL when shared). */
  put(tempPath: string, format: string): Promise<string>;
  /** Removes the bytes: every local copy, and the PostgreSQL copy. */
  remove(): Promise<void>;
};

export const sha256File = async (file: string) => {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
};

/** Processes starting together on a fresh database take turns creating it (see inSchemaTurn). */
const createBlobTable = (pool: pg.Pool) =>
  inSchemaTurn(pool, 'mindledger_file_blobs', async (client) => {
    await client.query(
      `CREATE TABLE IF NOT EXISTS mindledger_file_blobs (digest text NOT NULL, part integer NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (digest, part))`,
    );
  });

/**
 * With PostgreSQL, a local copy is a cache: one whose bytes were released there is garbage (the
 * process that released them removed its own copy; other processes drop theirs when they start).
 */
const dropReleasedCopies = async (pool: pg.Pool, directory: string) => {
  const local = (await fs.promises.readdir(directory))
    .map((f) => /^([0-9a-f]{64})\.[a-z]+$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null);
  if (!local.length) return;
  const { rows } = await pool.query<{ digest: string }>(
    'SELECT DISTINCT digest FROM mindledger_file_blobs WHERE digest = ANY($1)',
    [[...new Set(local.map((m) => m[1]!))]],
  );
  const kept = new Set(rows.map((r) => r.digest));
  for (const m of local)
    if (!kept.has(m[1]!)) await fs.promises.rm(path.join(directory, m[0]), { force: true });
};

/** A file's bytes into PostgreSQL in parts, once per digest, in one transaction. */
const storeInPostgres = async (client: pg.PoolClient, file: string, digest: string) => {
  const existing = await client.query('SELECT 1 FROM mindledger_file_blobs WHERE digest = $1 LIMIT 1', [
    digest,
  ]);
  if (existing.rowCount) return;
  try {
    await client.query('BEGIN');
    const handle = await fs.promises.open(file, 'r');
    try {
      const buffer = Buffer.alloc(PART);
      for (let part = 0; ; part++) {
        const { bytesRead } = await handle.read(buffer, 0, PART, part * PART);
        if (bytesRead === 0 && part > 0) break;
        await client.query(
          'INSERT INTO mindledger_file_blobs (digest, part, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          [digest, part, buffer.subarray(0, bytesRead)],
        );
        if (bytesRead < PART) break;
      }
    } finally {
      await handle.close();
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
};

export const openBlobStore = async (dataDir: string, postgresUrl?: string): Promise<BlobStore> => {
  const directory = path.join(dataDir, 'files', 'blobs');
  fs.mkdirSync(directory, { recursive: true });
  // Each blob lock holds a connection while its work runs; loading needs one more.
  const pool = postgresUrl ? new pg.Pool({ connectionString: postgresUrl, max: 4 }) : undefined;
  pool?.on('error', () => undefined);
  if (pool) await createBlobTable(pool);
  const pathOf = (digest: string, format: string) => path.join(directory, `${digest}.${format}`);

  const localCopies = async (digest: string) =>
    (await fs.promises.readdir(directory))
      .filter((f) => f.startsWith(`${digest}.`))
      .map((f) => path.join(directory, f));

  if (pool) await dropReleasedCopies(pool, directory);

  const findLocal = async (digest: string, format: string): Promise<string | null> => {
    const target = pathOf(digest, format);
    if (fs.existsSync(target)) return target;
    // The same bytes uploaded under another format (a .txt and a .csv) are the same blob.
    const other = (await localCopies(digest)).find((f) => !f.endsWith('.part'));
    if (other) return other;
    if (!pool) return null;
    const { rows } = await pool.query<{ bytes: Buffer }>(
      'SELECT bytes FROM mindledger_file_blobs WHERE digest = $1 ORDER BY part',
      [digest],
    );
    if (rows.length === 0) return null;
    const temp = `${target}.${process.pid}.part`;
    await fs.promises.writeFile(temp, Buffer.concat(rows.map((r) => r.bytes)));
    await fs.promises.rename(temp, target);
    return target;
  };

  const inProcess = keyedMutex();
  const lockKey = (digest: string) => `mindledger-blob:${digest}`;

  const locked = (digest: string, client: pg.PoolClient | undefined): LockedBlob => ({
    put: async (tempPath, format) => {
      const target = pathOf(digest, format);
      if (client) await storeInPostgres(client, tempPath, digest);
      if (fs.existsSync(target)) await fs.promises.rm(tempPath, { force: true });
      else await fs.promises.rename(tempPath, target);
      return target;
    },
    remove: async () => {
      if (client) await client.query('DELETE FROM mindledger_file_blobs WHERE digest = $1', [digest]);
      for (const copy of await localCopies(digest)) await fs.promises.rm(copy, { force: true });
    },
  });

  const withBlob: BlobStore['withBlob'] = (digest, work) =>
    inProcess(digest, async () => {
      if (!pool) return work(locked(digest, undefined));
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey(digest)]);
        try {
          return await work(locked(digest, client));
        } finally {
          await client
            .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey(digest)])
            .catch((error: Error) => (broken = error));
        }
      } finally {
        // A connection that failed to unlock is discarded: closing its session frees the lock.
        client.release(broken);
      }
    });

  return {
    directory,
    pathOf,
    withBlob,
    put: (tempPath, digest, format) => withBlob(digest, (blob) => blob.put(tempPath, format)),
    ensureLocal: async (digest, format) => {
      const found = await findLocal(digest, format);
      if (found !== null) return found;
      throw new Error(
        pool
          ? `The bytes of file ${digest} are neither on disk nor in PostgreSQL`
          : `The bytes of file ${digest} are missing from ${directory}`,
      );
    },
    findLocal,
    close: async () => {
      await pool?.end();
    },
  };
};
