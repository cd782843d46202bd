import type tls from 'node:tls';
import { quoteMysqlIdent } from '../../shared/quoting';
import { MysqlError } from '../outcome';
import type { ServerLogger, SqlEngine } from '../../doorway/engine';
import { authenticate, makeNonce, type AuthChannel, type AuthOptions } from '../protocol/auth';
import { Capability } from '../protocol/constants';
import { greeting, isSslRequest, parseHandshakeResponse } from '../protocol/packets';
import { Session } from '../session/session';
import type { ServerFacts } from '../session/variables';
import type { ServerView } from '../session/view';
import { withLoginNote, type DoorAuthenticator } from '../../doorway/credentials';
import type { ClientChannel } from './clientChannel';

/** What this server offers; a session uses what both sides offer. */
const SERVER_CAPABILITIES =
  Capability.LONG_PASSWORD |
  Capability.FOUND_ROWS |
  Capability.LONG_FLAG |
  Capability.CONNECT_WITH_DB |
  Capability.IGNORE_SPACE |
  Capability.PROTOCOL_41 |
  Capability.INTERACTIVE |
  Capability.IGNORE_SIGPIPE |
  Capability.TRANSACTIONS |
  Capability.RESERVED |
  Capability.SECURE_CONNECTION |
  Capability.MULTI_STATEMENTS |
  Capability.MULTI_RESULTS |
  Capability.PS_MULTI_RESULTS |
  Capability.PLUGIN_AUTH |
  Capability.CONNECT_ATTRS |
  Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA |
  Capability.DEPRECATE_EOF;

export type LogInOptions = {
  engine: SqlEngine;
  facts: ServerFacts;
  defaultDatabase: string;
  server: ServerView;
  logger: ServerLogger;
  tls: tls.SecureContext | undefined;
  auth: AuthOptions;
};

/** A client that logged in: its session, and the capabilities both sides offer. */
type LoggedIn = { session: Session; capabilities: number };

/**
 * Greeting, TLS, authentication and the first database. The caller sends the final OK once it
 * holds the session; undefined when the client left or was refused (the refusal is sent).
 */
export const logIn = async (
  channel: ClientChannel,
  o: LogInOptions,
  connectionId: number,
  host: string,
): Promise<LoggedIn | undefined> => {
  const nonce = makeNonce();
  const offered = SERVER_CAPABILITIES | (o.tls ? Capability.SSL : 0);
  greeting(channel.writer, {
    serverVersion: o.facts.serverVersion,
    connectionId,
    nonce,
    capabilities: offered,
    plugin: o.auth.defaultPlugin,
  });
  await channel.flushed();
  let packet = await channel.next();
  if (!packet) return undefined;
  if (isSslRequest(packet.payload)) {
    if (!o.tls) return undefined;
    await channel.upgradeToTls(o.tls);
    packet = await channel.next();
    if (!packet) return undefined;
  }
  const response = parseHandshakeResponse(packet.payload);
  channel.writer.sequence = packet.sequence + 1;
  o.logger.debug(
    {
      connection: connectionId,
      user: response.user,
      plugin: response.plugin,
      token: response.authResponse.length,
      capabilities: response.capabilities,
      attributes: response.attributes,
      tls: channel.secure,
    },
    'MySQL client connecting',
  );
  const auth: AuthChannel = {
    writer: channel.writer,
    secure: channel.secure,
    send: async () => {
      await channel.flushed();
      const p = await channel.next();
      if (p) channel.writer.sequence = p.sequence + 1;
      return p;
    },
  };
  const door = o.auth.authenticator as DoorAuthenticator | undefined;
  // Locked out (too many failures for this user from this address, or from this address): told
  // so and when to retry, before any proof of the password is asked for.
  const lockout = await door?.lockout?.(response.user, host);
  if (lockout) {
    channel.error(MysqlError.AccessDenied, lockout);
    await channel.flushed();
    return undefined;
  }
  const { result, note } = await withLoginNote(() => authenticate(auth, response, nonce, host, o.auth));
  if (result.ok) door?.signedIn?.(connectionId, note);
  if (!result.ok) {
    channel.error(MysqlError.AccessDenied, result.message);
    await channel.flushed();
    return undefined;
  }
  const session = new Session(connectionId, response.user, host, {
    engine: o.engine,
    facts: o.facts,
    server: o.server,
    defaultDatabase: o.defaultDatabase,
  });
  if (response.database) {
    const use = await session.run(`USE ${quoteMysqlIdent(response.database)}`, {});
    if (use.type === 'error') {
      channel.error(use.error_code, use.error_message);
      await channel.flushed();
      return undefined;
    }
  }
  return { session, capabilities: response.capabilities & offered };
};
