import { secretKeeper } from '../ledger/secretKeeper';
import { loadConfig } from '../config';
import { assertReadModelWritable, type AppContext } from '../context';
import { commandRunner } from '../eventlog/commands';
import { createLogger, flushLogger } from '../logger';
import { readCache, tableReadCaches } from '../shared/readCache';
import { withRequest } from '../shared/requestContext';
import { systemClock } from '../shared/time';
import { openStores } from '../stores';
import { usersService } from '../users/service';
import { ROLES, type Role } from '../users/state';

const usage = `usage:
  npm run user -- add <name> [--role admin|editor|analyst|auditor]   password from USER_PASSWORD or stdin
  npm run user -- passwd <name>                                        password from USER_PASSWORD or stdin
  npm run user -- role <name> <role>
  npm run user -- remove <name>
  npm run user -- list
With SQLite, run it while the service is stopped (one writer); with PostgreSQL, at any time.`;

/** The password, never from the command line (it would sit in the shell history and `ps`). */
const readPassword = async (): Promise<string> => {
  if (process.env.USER_PASSWORD) return process.env.USER_PASSWORD;
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if (process.stdin.isTTY && Buffer.concat(chunks).includes(10)) break;
  }
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
};

const main = async () => {
  const [command, name, ...rest] = process.argv.slice(2);
  const roleFlag = rest.indexOf('--role');
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const stores = await openStores(config, logger, systemClock, { poll: true }).catch((err: unknown) => {
    // DuckDB's own words name a lock and a process id; the operator needs what to do.
    if (/could not set lock|conflicting lock/i.test((err as Error).message))
      throw new Error(
        `The service is running on this DATA_DIR (its read model is locked by it): stop it first, or change users through the running service instead (POST /api/users, PUT /api/users/{name}, DELETE /api/users/{name}).`,
      );
    throw err;
  });
  await stores.projections.startServing();
  const commands = commandRunner(stores.log, {
    assertWritable: () => assertReadModelWritable(stores.projections),
  });
  const ctx: AppContext = {
    config,
    secrets: secretKeeper({ commands, log: stores.log, clock: systemClock, logger }, stores.vault),
    log: stores.log,
    duck: stores.duck,
    projections: stores.projections,
    commands,
    cached: readCache(() => stores.projections.version, { holdsConnection: stores.duck.holdsReader }),
    cachedOf: tableReadCaches((table) => stores.projections.tableVersion(table), {
      holdsConnection: stores.duck.holdsReader,
    }),
    // The command line answers nothing ahead of its read model: there is nothing to wait for.
    ownWrites: () => undefined,
    clock: systemClock,
    logger,
  };
  const users = usersService(ctx, { sessionTtlMs: config.auth.sessionTtlMs });
  try {
    await withRequest(
      { requestId: `cli-${process.pid}`, interface: 'system', actor: { kind: 'system', id: 'cli' } },
      async () => {
        switch (command) {
          case 'add': {
            const role = (roleFlag >= 0 ? rest[roleFlag + 1] : 'analyst') as Role;
            if (!name || !ROLES.includes(role)) throw new Error(usage);
            const password = await readPassword();
            if (password.length < 8) throw new Error('A password has at least 8 characters');
            await users.create({ name, role, password });
            process.stdout.write(`user ${name} added (${role})\n`);
            return;
          }
          case 'passwd': {
            if (!name) throw new Error(usage);
            const password = await readPassword();
            if (password.length < 8) throw new Error('A password has at least 8 characters');
            await users.update(name, { password });
            process.stdout.write(`password of ${name} changed; their sessions ended\n`);
            return;
          }
          case 'role': {
            const role = rest[0] as Role;
            if (!name || !ROLES.includes(role)) throw new Error(usage);
            await users.update(name, { role });
            process.stdout.write(`${name} is now ${role}\n`);
            return;
          }
          case 'remove':
            if (!name) throw new Error(usage);
            await users.remove(name);
            process.stdout.write(`user ${name} removed\n`);
            return;
          case 'list':
            for (const u of await users.list()) process.stdout.write(`${u.name}\t${u.role}\n`);
            return;
          default:
            throw new Error(usage);
        }
      },
    );
    return 0;
  } finally {
    await stores.close();
    flushLogger(logger);
  }
};

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  },
);
