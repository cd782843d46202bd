import { AsyncLocalStorage } from 'node:async_hooks';
import type net from 'node:net';
import { PreAuthGate } from '../shared/preAuthGate';
import type { Authenticator } from './port';

/**
 * What both wire doors (MySQL's and PostgreSQL's, src/pgwire/server.ts) do with a socket before its
 * protocol speaks, in one place: refuse it when the signed-in room is full, else put it in the
 * pre-authentication room (src/shared/preAuthGate.ts: bounded in all and per address, the oldest
 * dropped past either) until it signs in, then count it among the signed-in until it ends.
 */
export const doorway = (o: { maxConnections: number; maxPreAuth: number; maxPreAuthPerAddress: number }) => {
  const preAuth = new PreAuthGate({ max: o.maxPreAuth, perAddress: o.maxPreAuthPerAddress });
  let signedIn = 0;
  return {
    /** The signed-in room is full: the newcomer gets the protocol's "too many connections". */
    full: () => signedIn >= o.maxConnections,
    /** Signed-in connections now. */
    signedIn: () => signedIn,
    /** Waiting (not signed in) connections now. */
    waiting: () => preAuth.size(),
    /**
     * A socket enters the pre-authentication room (`drop` ends it if the room drops it): its
     * connection calls `loggedIn` once signed in and `ended` once gone (both idempotent).
     */
    admit: (socket: net.Socket, drop: () => void) => {
      const ticket = preAuth.admit(clientAddress(socket), drop);
      let counted = false;
      return {
        loggedIn: () => {
          ticket.leave();
          if (counted) return;
          counted = true;
          signedIn++;
        },
        ended: () => {
          ticket.leave();
          if (!counted) return;
          counted = false;
          signedIn--;
        },
      };
    },
  };
};

/** A client's address as both doors name it (IPv4 without its IPv6-mapped prefix). */
export const clientAddress = (socket: net.Socket) => (socket.remoteAddress ?? '').replace(/^::ffff:/, '');

/**
 * What a door's credential checks learned about a login besides yes or no: the access token used,
 * and the failed proof counted on the way (MySQL's fast path, whose scramble cannot tell a token
 * from the password: a login that then signs in with a token was no guess).
 */
export type LoginNote = { tokenId?: string; failed?: { user: string; host: string } };

const notes = new AsyncLocalStorage<LoginNote>();

/** Runs a login's credential checks, collecting what they note (`noteLogin`). */
export const withLoginNote = async <T>(run: () => Promise<T>): Promise<{ result: T; note: LoginNote }> => {
  const note: LoginNote = {};
  const result = await notes.run(note, run);
  return { result, note };
};

/** Called by a credential check (`verify`): the login being checked used this token. */
export const noteLogin = (note: LoginNote) => {
  const current = notes.getStore();
  if (current) Object.assign(current, note);
};

/** What the login being checked has noted so far (undefined outside a login). */
export const currentLoginNote = (): Readonly<LoginNote> | undefined => notes.getStore();

/**
 * The credentials the users' door (src/users/sqlDoors.ts) gives both wire doors: the protocol's
 * Authenticator, and what the doors tell it about each connection.
 */
export type DoorAuthenticator = Authenticator & {
  /**
   * Why a login of this user from this address is refused before any proof is checked (too many
   * failures), in words for the client, with when to retry; undefined: it is not.
   */
  lockout?(user: string, host: string): string | undefined | Promise<string | undefined>;
  /** A connection signed in, with what its check noted (the token it used, if any). */
  signedIn?(connectionId: number, note: LoginNote): void;
  /** A connection ended. */
  signedOut?(connectionId: number): void;
};
