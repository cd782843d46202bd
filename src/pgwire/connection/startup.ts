import type tls from 'node:tls';
import { isLoopback } from '../../config/binding';
import { withLoginNote, type DoorAuthenticator } from '../../doorway/credentials';
import { PgState } from '../errors';
import {
  authenticationCleartextPassword,
  authenticationOk,
  backendKeyData,
  errorResponse,
  negotiateProtocolVersion,
  parameterStatus,
  readyForQuery,
} from '../protocol/backend';
import { PG_SERVER_VERSION, REPORTED, Settings } from '../session/settings';
import type { PgChannel } from './channel';
import { optionsOf } from './startupOptions';

/** What the startup exchange needs of the connection and the server. */
type StartupContext = {
  processId: number;
  secret: number;
  /** The client's address (a password is taken in clear only over TLS or from loopback). */
  address: string;
  tls?: tls.SecureContext;
  auth?: DoorAuthenticator;
  /** A CancelRequest came in this connection's place, naming another one. */
  cancel(processId: number, secret: number): void;
};

/** A logged-in client: who, which project its statements run in, its run-time parameters. */
type StartedSession = { user: string; database: string | undefined; settings: Settings };

const fatal = (channel: PgChannel, code: string, message: string) => {
  errorResponse(channel.writer, { severity: 'FATAL', code, message });
  return channel.end();
};

/**
 * The startup exchange: SSL/GSS requests (TLS when configured), a CancelRequest (served and
 * gone), the startup packet (protocol 3.0, newer minors negotiated down), the password when
 * authentication is on, then the parameters, the key data and ReadyForQuery. The session, or
 * undefined when the client is refused or gone (it has been told why).
 */
export const startSession = async (
  channel: PgChannel,
  c: StartupContext,
): Promise<StartedSession | undefined> => {
  const w = channel.writer;
  for (;;) {
    const packet = await channel.nextStartup();
    if (!packet) return undefined;
    switch (packet.kind) {
      case 'ssl':
        if (c.tls && !channel.secure) {
          w.rawByte(0x53);
          await channel.flushed();
          await channel.upgradeToTls(c.tls);
        } else {
          w.rawByte(0x4e);
          await channel.flushed();
        }
        continue;
      case 'gssenc':
        w.rawByte(0x4e);
        await channel.flushed();
        continue;
      case 'cancel':
        c.cancel(packet.processId, packet.secret);
        channel.destroy();
        return undefined;
      case 'unsupported':
        await fatal(
          channel,
          PgState.FeatureNotSupported,
          `unsupported frontend protocol ${packet.code >>> 16}.${packet.code & 0xffff}: server supports 3.0 to 3.0`,
        );
        return undefined;
      case 'startup':
        return logIn(channel, c, packet.params, packet.minorVersion, packet.protocolOptions);
      default: {
        const _exhaustive: never = packet;
        return _exhaustive;
      }
    }
  }
};

const logIn = async (
  channel: PgChannel,
  c: StartupContext,
  params: Record<string, string>,
  minorVersion: number,
  protocolOptions: string[],
): Promise<StartedSession | undefined> => {
  const w = channel.writer;
  const user = params.user;
  if (!user) {
    await fatal(channel, PgState.InvalidAuthorization, 'no PostgreSQL user name specified in startup packet');
    return undefined;
  }
  if (minorVersion > 0 || protocolOptions.length) negotiateProtocolVersion(w, 0, protocolOptions);
  if (c.auth) {
    if (!channel.secure && !isLoopback(c.address)) {
      await fatal(
        channel,
        PgState.InvalidAuthorization,
        c.tls
          ? 'the password is only taken over TLS: connect with sslmode=require (or prefer)'
          : 'the password is only taken over TLS or from this machine: the server has no PG_TLS_CERT/PG_TLS_KEY configured',
      );
      return undefined;
    }
    // Locked out (too many failures for this user from this address, or from this address): told
    // so and when to retry, before any password is asked for or checked.
    const lockout = c.auth.lockout
      ? await c.auth.lockout(user, c.address)
      : c.auth.blocked && (await c.auth.blocked(user, c.address))
        ? `too many failed sign-ins from this address for user "${user}": retry later`
        : undefined;
    if (lockout) {
      await fatal(channel, PgState.InvalidAuthorization, lockout);
      return undefined;
    }
    authenticationCleartextPassword(w);
    await channel.flushed();
    const answer = await channel.next();
    if (!answer) return undefined;
    const auth = c.auth;
    // The password field may hold an access token (src/users/sqlDoors.ts): its check notes which.
    const { result: ok, note } = await withLoginNote(
      async () => answer.type === 'password' && (await auth.verify(user, answer.password)),
    );
    if (!ok) {
      auth.failed?.(user, c.address);
      await fatal(channel, PgState.InvalidPassword, `password authentication failed for user "${user}"`);
      return undefined;
    }
    auth.signedIn?.(c.processId, note);
  }
  const settings = new Settings({
    user,
    applicationName: params.application_name ?? '',
    superuser: false,
    serverVersion: PG_SERVER_VERSION,
  });
  // Run-time parameters given at startup (libpq's `options=-c x=y`, JDBC's TimeZone …): the
  // session's defaults, which RESET goes back to.
  for (const [name, value] of Object.entries({ ...params, ...optionsOf(params.options) })) {
    if (['user', 'database', 'options', 'replication', 'application_name'].includes(name)) continue;
    try {
      settings.setDefault(name, value);
    } catch (error) {
      await fatal(channel, PgState.InvalidParameterValue, (error as Error).message);
      return undefined;
    }
  }
  channel.loggedIn();
  authenticationOk(w);
  for (const name of REPORTED) parameterStatus(w, name, settings.get(name)!);
  backendKeyData(w, c.processId, c.secret);
  readyForQuery(w, 'I');
  await channel.flushed();
  return { user, database: params.database || undefined, settings };
};
