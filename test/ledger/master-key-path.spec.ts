/**
 * The master key is never derived from the data directory's path: when `$DATA_DIR/ledger-master-key`
 * happened to be 43 characters of the base64 alphabet, the path itself was read as an inline key (no
 * key file written, the key known to whoever knows the path, a moved data directory refusing to
 * start). A key file is given as a file (LEDGER_MASTER_KEY_FILE, `file:<path>`, or the default),
 * a key as a key (LEDGER_MASTER_KEY), never told apart by shape.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { databaseAggregate, databaseStream } from '../../src/databases/state';
import { startTestApp, type TestApp } from '../support/app';
import { postgresParameters } from '../support/external';

const KEY_FILE = 'ledger-master-key';

/** A data directory whose default key file's path is exactly 43 base64 (URL-safe alphabet) characters. */
const dataDirWithKeyShapedKeyPath = () => {
  const base = fs.realpathSync(os.tmpdir());
  // mkdtemp appends 6 characters to the prefix.
  const nameLength = 43 - KEY_FILE.length - 1 - base.length - 1;
  if (!/^[A-Za-z0-9+/_-]+$/.test(base) || nameLength < 7)
    throw new Error(`cannot make a key-shaped path under ${base}`);
  const dir = fs.mkdtempSync(path.join(base, 'm'.repeat(nameLength - 6)));
  const keyPath = path.join(dir, KEY_FILE);
  expect(keyPath).toMatch(/^[A-Za-z0-9+/_-]{43}$/);
  expect(Buffer.from(keyPath.replace(/-/g, '+').replace(/_/g, '/'), 'base64').length).toBe(32);
  return dir;
};

const passwordOf = async (t: TestApp, name: string) => {
  const { state } = await t.running.ctx.commands.load(databaseStream(name), databaseAggregate);
  return 'parameters' in state ? (state.parameters as Record<string, unknown>).password : undefined;
};

describe('the master key of a data directory whose key path looks like a key', () => {
  const dirs: string[] = [];
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('is kept in the key file, and the data directory moved to another path starts and unseals its secrets', async () => {
    const first = dataDirWithKeyShapedKeyPath();
    dirs.push(first);
    t = await startTestApp('sqlite', { DATA_DIR: first });
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'sealed_db', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    // The key is in its file: random bytes, not the path's.
    const keyPath = path.join(first, KEY_FILE);
    expect(fs.existsSync(keyPath)).toBe(true);
    expect(fs.statSync(keyPath).mode & 0o777).toBe(0o600);
    const key = Buffer.from(fs.readFileSync(keyPath, 'utf8').trim(), 'base64');
    expect(key).toHaveLength(32);
    expect(key.equals(Buffer.from(keyPath.replace(/-/g, '+').replace(/_/g, '/'), 'base64'))).toBe(false);
    await t.stop();

    // The whole data directory moved (a restore, a new volume): another path, the same key file.
    const moved = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-moved-'));
    dirs.push(moved);
    fs.rmdirSync(moved);
    fs.renameSync(first, moved);
    t = await t.restart({ DATA_DIR: moved });
    expect(t.config.ledger.masterKey).toBe(`file:${path.join(moved, KEY_FILE)}`);
    await t.http.get('/api/databases/sealed_db').expect(200);
    expect(await passwordOf(t, 'sealed_db')).toBe(postgresParameters().password);
    expect((await t.http.get('/api/audit/verify').expect(200)).body).toMatchObject({ ok: true });
  });

  it('takes LEDGER_MASTER_KEY as a key and LEDGER_MASTER_KEY_FILE (or file:<path>) as a file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-keyfile-'));
    dirs.push(dir);
    const file = path.join(dir, 'elsewhere', 'master.key');
    expect(loadConfig({ LEDGER_MASTER_KEY_FILE: file }).ledger.masterKey).toBe(`file:${file}`);
    expect(() => loadConfig({ LEDGER_MASTER_KEY_FILE: file, LEDGER_MASTER_KEY: 'x' })).toThrow(/set one/);
    t = await startTestApp('sqlite', { LEDGER_MASTER_KEY: `file:${file}` });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'sealed_db', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    // The same key given inline opens the same data keys.
    t = await t.restart({ LEDGER_MASTER_KEY: fs.readFileSync(file, 'utf8').trim() });
    expect(await passwordOf(t, 'sealed_db')).toBe(postgresParameters().password);
    await expect(t.restart({ LEDGER_MASTER_KEY: file })).rejects.toThrow(/file:<path>/);
  });
});
