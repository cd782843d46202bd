import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Configured credentials. With none, any user and password connect. `verify` checks a password
 * given in clear (caching_sha2_password's full authentication, over TLS or RSA-encrypted);
 * `passwordOf`, when the credentials are kept in clear, also lets mysql_native_password and
 * caching_sha2_password's fast path check a scramble without the password ever being sent.
 */
export interface Authenticator {
  verify(user: string, password: string): boolean | Promise<boolean>;
  passwordOf?(user: string): string | undefined | Promise<string | undefined>;
  /**
   * Names the user's current credentials (changes when the password does): caching_sha2's cached
   * digest is kept per user and tag, so an old password stops working on the fast path.
   */
  cacheTag?(user: string): string | Promise<string>;
  /**
   * Whether a login of this user from this client address is refused before any proof of the
   * password is checked (too many failures): asked before the fast path, a scramble and a full
   * authentication alike (and again before a full authentication that follows a failed fast path).
   */
  blocked?(user: string, host: string): boolean | Promise<boolean>;
  /**
   * A proof of the password failed (a full authentication, a fast-path token, a scramble, a
   * PostgreSQL password): counted once per login.
   */
  failed?(user: string, host: string): void;
}

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
 * The credentials the users' door (src/users/sqlDoors.ts) gives both wire doors: `Authenticator`,
 * and what the doors tell it about each connection.
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
