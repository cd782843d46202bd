import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './service';

const run = promisify(execFile);

/** The newest PostgreSQL installed on the machine (Debian's layout: /usr/lib/postgresql/<major>/bin). */
const postgresBin = () => {
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) throw new Error(`no PostgreSQL binaries under ${root}/*/bin`);
  return path.join(root, majors[0]!, 'bin');
};

/** The OS user PostgreSQL runs as: initdb and postgres refuse root, which the suite runs as. */
const OS_USER = 'postgres';

export type PrivatePostgres = {
  port: number;
  /** The URL of database `name` on this server (trust auth, user postgres). */
  url: (name: string) => string;
  createDatabase: (name: string) => Promise<string>;
  /** `pg_ctl start -w`: resolves once the server accepts connections. */
  start: () => Promise<void>;
  /** `pg_ctl stop -m fast -w`: every backend is terminated, the server shuts down cleanly. */
  stop: () => Promise<void>;
  /** The server's own log (for a spec that failed). */
  serverLog: () => string;
  /** Stops the server (immediate) and removes its directory; safe to call twice, or after a failed start. */
  remove: () => Promise<void>;
};

/**
 * A PostgreSQL cluster of a spec's own, made with the machine's binaries in a fresh directory, on a
 * free port of 127.0.0.1 with trust auth: one a spec may stop and start (a restart, an outage)
 * without touching the machine's server on 5432, which every other spec uses. Runs as the
 * `postgres` OS user. Remove it in afterAll, failure or not (an exit hook stops it too, should
 * jest end first).
 */
export const startPrivatePostgres = async (): Promise<PrivatePostgres> => {
  const bin = postgresBin();
  const port = await freePort();
  // Not os.tmpdir(): the suite's scratch directory (/dev/shm/mlXXXXXX) is root's own, 0700.
  const dir = fs.mkdtempSync('/tmp/mindledger-pg-');
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  execFileSync('chown', [OS_USER, dir]);
  const asPostgres = (command: string, args: string[]) =>
    run('runuser', ['-u', OS_USER, '--', path.join(bin, command), ...args], { cwd: dir });
  const pgCtl = (...args: string[]) => asPostgres('pg_ctl', ['-D', dataDir, ...args]);

  let removed = false;
  const stopNow = () => {
    try {
      execFileSync(
        'runuser',
        ['-u', OS_USER, '--', path.join(bin, 'pg_ctl'), '-D', dataDir, 'stop', '-m', 'immediate'],
        { stdio: 'ignore' },
      );
    } catch {
      // Not running.
    }
  };
  const onExit = () => {
    if (removed) return;
    stopNow();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const remove = async () => {
    if (removed) return;
    removed = true;
    process.removeListener('exit', onExit);
    await pgCtl('stop', '-m', 'immediate', '-w').catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };

  const url = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  const server: PrivatePostgres = {
    port,
    url,
    createDatabase: async (name) => {
      const c = new pg.Client({ connectionString: url('postgres') });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    start: async () => {
      await pgCtl(
        '-l',
        logFile,
        '-o',
        // fsync off: only an OS crash would need it, and it is the cost of this server on a busy disk.
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
        '-w',
        '-t',
        '60',
        'start',
      );
    },
    stop: async () => {
      await pgCtl('stop', '-m', 'fast', '-w', '-t', '60');
    },
    serverLog: () => {
      try {
        return fs.readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
    remove,
  };
  try {
    await asPostgres('initdb', [
      '-D',
      dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '--no-locale',
      '-E',
      'UTF8',
    ]);
    await server.start();
  } catch (error) {
    await remove();
    throw error;
  }
  return server;
};
