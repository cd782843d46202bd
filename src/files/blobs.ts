import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';

const PART = 4 * 1024 * 1024;

/**
 * Uploaded bytes, content-addressed by sha256 under DATA_DIR/files/blobs. With the log on
 * PostgreSQL the bytes are stored there too (in 4 MiB parts), so a process that never saw the
 * upload (or lost its disk) can still load the file when it replays the log.
 */
export type BlobStore = {
  readonly directory: string;
  pathOf(digest: string, format: string): string;
  /** Moves a verified temporary file into place (and into PostgreSQL when shared). */
  put(tempPath: string, digest: string, format: string): Promise<string>;
  /** The local path of a blob, fetched from PostgreSQL first if this process lacks it. */
  ensureLocal(digest: string, format: string): Promise<string>;
  close(): Promise<void>;
};

export const sha256File = async (file: string) => {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
};

export const openBlobStore = async (dataDir: string, postgresUrl?: string): Promise<BlobStore> => {
  const directory = path.join(dataDir, 'files', 'blobs');
  fs.mkdirSync(directory, { recursive: true });
  const pool = postgresUrl ? new pg.Pool({ connectionString: postgresUrl, max: 2 }) : undefined;
  pool?.on('error', () => undefined);
  if (pool)
    await pool.query(
      `CREATE TABLE IF NOT EXISTS mindledger_file_blobs (digest text NOT NULL, part integer NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (digest, part))`,
    );
  const pathOf = (digest: string, format: string) => path.join(directory, `${digest}.${format}`);

  const storeInPostgres = async (file: string, digest: string) => {
    if (!pool) return;
    const existing = await pool.query('SELECT 1 FROM mindledger_file_blobs WHERE digest = $1 LIMIT 1', [
      digest,
    ]);
    if (existing.rowCount) return;
    const client = await pool.connect();
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
    } finally {
      client.release();
    }
  };

  return {
    directory,
    pathOf,
    put: async (tempPath, digest, format) => {
      const target = pathOf(digest, format);
      await storeInPostgres(tempPath, digest);
      if (fs.existsSync(target)) await fs.promises.rm(tempPath, { force: true });
      else await fs.promises.rename(tempPath, target);
      return target;
    },
    ensureLocal: async (digest, format) => {
      const target = pathOf(digest, format);
      if (fs.existsSync(target)) return target;
      if (!pool) throw new Error(`The bytes of file ${digest} are missing from ${directory}`);
      const { rows } = await pool.query<{ bytes: Buffer }>(
        'SELECT bytes FROM mindledger_file_blobs WHERE digest = $1 ORDER BY part',
        [digest],
      );
      if (rows.length === 0)
        throw new Error(`The bytes of file ${digest} are neither on disk nor in PostgreSQL`);
      const temp = `${target}.${process.pid}.part`;
      await fs.promises.writeFile(temp, Buffer.concat(rows.map((r) => r.bytes)));
      await fs.promises.rename(temp, target);
      return target;
    },
    close: async () => {
      await pool?.end();
    },
  };
};
