import crypto from 'node:crypto';
import type { DataKeyStore } from './dataKeyStore';
import {
  decryptSecret,
  encryptSecret,
  generateDataKey,
  parseEncryptedSecret,
  SecretUnavailableError,
  unwrapDataKey,
  wrapDataKey,
  type DataKey,
  type MasterKey,
} from './envelope';

/**
 * What services use: create a resource's data key, encrypt and decrypt its secrets, forget it.
 * Unwrapped keys are cached in memory; destroying a key drops it from the cache too.
 */
export class SecretVault {
  private readonly unwrapped = new Map<string, DataKey>();

  /** `retired`: earlier master keys, still accepted for unwrapping until every key is re-wrapped. */
  constructor(
    private readonly store: DataKeyStore,
    private readonly master: MasterKey,
    private readonly retired: readonly MasterKey[] = [],
  ) {}

  /**
   * Refuses a master key that cannot open the keys already in the store: a process started with
   * another LEDGER_MASTER_KEY than its peers on one log would otherwise read every secret as
   * forgotten and fail to seal new ones. A canary key, made by the first process, tells.
   */
  async checkMasterKey(): Promise<void> {
    const kid = 'master-key-check';
    let wrapped = await this.store.get(kid);
    if (wrapped === null) {
      try {
        await this.createKey(kid);
        return;
      } catch {
        // Another process made it at the same moment: check against its copy.
        wrapped = await this.store.get(kid);
        if (wrapped === null) throw new Error('The master key check could not be stored');
      }
    }
    try {
      unwrapDataKey(wrapped, kid, [this.master, ...this.retired]);
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      throw new Error(
        `LEDGER_MASTER_KEY cannot open this log's data keys (${error.message}): every process on one log needs the same master key, and a replaced one belongs in LEDGER_RETIRED_MASTER_KEYS`,
      );
    }
  }

  async createKey(kid: string = crypto.randomUUID()): Promise<DataKey> {
    const dataKey = generateDataKey(kid);
    await this.store.put(kid, wrapDataKey(dataKey, this.master));
    this.unwrapped.set(kid, dataKey);
    return dataKey;
  }

  private async keyOf(kid: string): Promise<DataKey> {
    const cached = this.unwrapped.get(kid);
    if (cached) return cached;
    const wrapped = await this.store.get(kid);
    if (wrapped === null) throw new SecretUnavailableError('forgotten', `Data key ${kid} was destroyed`);
    const dataKey = unwrapDataKey(wrapped, kid, [this.master, ...this.retired]);
    this.unwrapped.set(kid, dataKey);
    return dataKey;
  }

  async encrypt(kid: string, value: string): Promise<string> {
    return encryptSecret(value, await this.keyOf(kid));
  }

  async decrypt(text: string): Promise<string> {
    return decryptSecret(text, await this.keyOf(parseEncryptedSecret(text).kid));
  }

  /**
   * The data key new secrets of a resource are sealed with: its live key (the first of those under
   * its prefix), else a new one. Asked of the store each time, never of a cache: a key another
   * process destroyed is never used again here.
   */
  async keyForResource(prefix: string): Promise<DataKey> {
    const [kid] = await this.store.list(prefix);
    if (kid !== undefined) {
      const wrapped = await this.store.get(kid);
      if (wrapped !== null) return unwrapDataKey(wrapped, kid, [this.master, ...this.retired]);
    }
    return this.createKey(`${prefix}${crypto.randomBytes(8).toString('hex')}`);
  }

  /**
   * The keys of these ids that still exist, read from the store (not a cache, so a key destroyed by
   * any process opens nothing from then on). A key sealed under another master key is left out.
   */
  async openKeys(kids: Iterable<string>): Promise<Map<string, DataKey>> {
    const keys = new Map<string, DataKey>();
    for (const kid of kids) {
      const wrapped = await this.store.get(kid);
      if (wrapped === null) continue;
      try {
        keys.set(kid, unwrapDataKey(wrapped, kid, [this.master, ...this.retired]));
      } catch (error) {
        if (!(error instanceof SecretUnavailableError)) throw error;
      }
    }
    return keys;
  }

  /** The ids of a resource's keys (all its incarnations). */
  keysOf(prefix: string): Promise<string[]> {
    return this.store.list(prefix);
  }

  /** Destroys every key of a resource (all its incarnations); answers the ids destroyed. */
  async forgetResource(prefix: string): Promise<string[]> {
    const destroyed: string[] = [];
    for (const kid of await this.store.list(prefix)) if (await this.destroyKey(kid)) destroyed.push(kid);
    return destroyed;
  }

  /** Destroys the key: every secret encrypted under it becomes unreadable, here and in every copy of the log. */
  async destroyKey(kid: string): Promise<boolean> {
    const cached = this.unwrapped.get(kid);
    cached?.key.fill(0);
    this.unwrapped.delete(kid);
    return this.store.destroy(kid);
  }
}
