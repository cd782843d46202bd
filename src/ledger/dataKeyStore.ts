import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { inSchemaTurn } from '../shared/pgTurns';
import { requireKid } from './envelope';

/** Where wrapped data keys live: outside the append-only log, so that one can be destroyed. */
export interface DataKeyStore {
  /** Stores a new key; refuses an id already in use. */
  put(kid: string, wrapped: string): Promise<void>;
  get(kid: string): Promise<string | null>;
  /** Removes the key for good; false when there was none. */
  destroy(kid: string): Promise<boolean>;
  /** The ids of the keys held whose id starts with `prefix`, in order. */
  list(prefix: string): Promise<string[]>;
}

/** The resource part of a key id: up to and including its first `-` (the whole id without one). */
const resourceOf = (kid: string): string => {
  const dash = kid.indexOf('-');
  return dash < 0 ? kid : kid.slice(0, dash + 1);
};

/**
 * One file per wrapped key (mode 0600) in a directory of its own. Written to a temporary file and
 * linked into place (so a crash never leaves half a key, and an id is never overwritten); destroyed
 * by overwriting the file with random bytes, syncing, unlinking and syncing the directory. On SSDs
 * and copy-on-write file systems the overwrite is best effort: what makes the key unrecoverable
 * for good is that it was only ever stored wrapped, and the master key is rotated (docs/security.md).
 */
export class FileDataKeyStore implements DataKeyStore {
  /**
   * The ids of the keys held, by resource (the id up to its first `-`), read from the directory once:
   * a sealed write asks for its resource's key, and reading a directory of thousands of keys for
   * each made sealing 4× slower than the append. Only this process writes the directory (a file
   * store goes with the SQLite log, which has one writer), so the index stays true; `get` still
   * reads the file, so a key gone from the disk is never used.
   */
  private readonly index = new Map<string, Set<string>>();

  constructor(private readonly directory: string) {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    for (const name of fs.readdirSync(directory))
      if (name.endsWith('.key') && !name.startsWith('.')) this.indexed(name.slice(0, -'.key'.length), true);
  }

  private indexed(kid: string, held: boolean): void {
    const resource = resourceOf(kid);
    const kids = this.index.get(resource) ?? new Set<string>();
    if (held) kids.add(kid);
    else kids.delete(kid);
    if (kids.size > 0) this.index.set(resource, kids);
    else this.index.delete(resource);
  }

  private fileOf(kid: string): string {
    requireKid(kid);
    return path.join(this.directory, `${kid}.key`);
  }

  private async syncDirectory(): Promise<void> {
    const handle = await fs.promises.open(this.directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async put(kid: string, wrapped: string): Promise<void> {
    const file = this.fileOf(kid);
    const temporary = path.join(this.directory, `.${kid}.${crypto.randomUUID()}.tmp`);
    const handle = await fs.promises.open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(wrapped, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.promises.link(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new Error(`Data key ${kid} exists already`);
      throw error;
    } finally {
      await fs.promises.unlink(temporary);
    }
    await this.syncDirectory();
    this.indexed(kid, true);
  }

  async get(kid: string): Promise<string | null> {
    try {
      return await fs.promises.readFile(this.fileOf(kid), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    // A resource's prefix (`r…-`) is one entry of the index; any other prefix looks through all.
    const resource = resourceOf(prefix);
    const candidates =
      prefix.endsWith('-') && resource === prefix
        ? (this.index.get(resource) ?? [])
        : [...this.index.values()].flatMap((kids) => [...kids]);
    return [...candidates].filter((kid) => kid.startsWith(prefix)).sort();
  }

  async destroy(kid: string): Promise<boolean> {
    const file = this.fileOf(kid);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.indexed(kid, false);
        return false;
      }
      throw error;
    }
    this.indexed(kid, false);
    try {
      const { size } = await handle.stat();
      await handle.write(crypto.randomBytes(Math.max(size, 1)), 0, Math.max(size, 1), 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.unlink(file);
    await this.syncDirectory();
    return true;
  }
}

/**
 * The keys of every process on one PostgreSQL log: a table outside Emmett's, in the log's database.
 * Destroyed by DELETE; PostgreSQL keeps the dead row until VACUUM, and WAL archives longer (docs/security.md).
 */
export class PostgresDataKeyStore implements DataKeyStore {
  private constructor(private readonly pool: pg.Pool) {}

  static async open(pool: pg.Pool): Promise<PostgresDataKeyStore> {
    // Processes starting together on a fresh database take turns creating it (see inSchemaTurn).
    await inSchemaTurn(pool, 'mindledger_data_keys', async (client) => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS mindledger_data_keys (
           kid text COLLATE "C" PRIMARY KEY, wrapped text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
      );
    });
    return new PostgresDataKeyStore(pool);
  }

  async put(kid: string, wrapped: string): Promise<void> {
    requireKid(kid);
    const inserted = await this.pool.query(
      'INSERT INTO mindledger_data_keys (kid, wrapped) VALUES ($1, $2) ON CONFLICT (kid) DO NOTHING',
      [kid, wrapped],
    );
    if (inserted.rowCount !== 1) throw new Error(`Data key ${kid} exists already`);
  }

  async get(kid: string): Promise<string | null> {
    requireKid(kid);
    const found = await this.pool.query<{ wrapped: string }>(
      'SELECT wrapped FROM mindledger_data_keys WHERE kid = $1',
      [kid],
    );
    return found.rows[0]?.wrapped ?? null;
  }

  async destroy(kid: string): Promise<boolean> {
    requireKid(kid);
    const deleted = await this.pool.query('DELETE FROM mindledger_data_keys WHERE kid = $1', [kid]);
    return deleted.rowCount === 1;
  }

  async list(prefix: string): Promise<string[]> {
    // The ids starting with `prefix` are those in [prefix, prefix with its last character raised),
    // byte order (the column's collation is "C"), a range its primary key index answers.
    if (prefix === '') {
      const all = await this.pool.query<{ kid: string }>('SELECT kid FROM mindledger_data_keys ORDER BY kid');
      return all.rows.map((r) => r.kid);
    }
    const above = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    const found = await this.pool.query<{ kid: string }>(
      'SELECT kid FROM mindledger_data_keys WHERE kid >= $1 AND kid < $2 ORDER BY kid',
      [prefix, above],
    );
    return found.rows.map((r) => r.kid);
  }
}
