import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { requireKid } from './envelope';

/** Where wrapped data keys live: outside the append-only log, so that one can be destroyed. */
export interface DataKeyStore {
  /** Stores a new key; refuses an id already in use. */
  put(kid: string, wrapped: string): Promise<void>;
  get(kid: string): Promise<string | null>;
  /** Removes the key for good; false when there was none. */
  destroy(kid: string): Promise<boolean>;
}

/**
 * One file per wrapped key (mode 0600) in a directory of its own. Written to a temporary file and
 * linked into place (so a crash never leaves half a key, and an id is never overwritten); destroyed
 * by overwriting the file with random bytes, syncing, unlinking and syncing the directory. On SSDs
 * and copy-on-write file systems the overwrite is best effort: what makes the key unrecoverable
 * for good is that it was only ever stored wrapped, and the master key is rotated (README.md).
 */
export class FileDataKeyStore implements DataKeyStore {
  constructor(private readonly directory: string) {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
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
  }

  async get(kid: string): Promise<string | null> {
    try {
      return await fs.promises.readFile(this.fileOf(kid), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async destroy(kid: string): Promise<boolean> {
    const file = this.fileOf(kid);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
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
