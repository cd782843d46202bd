import type { AppContext } from '../context';
import { BoundedMap } from '../shared/boundedMap';
import { nameKey } from '../shared/names';
import { hashSecret, randomId, sha256Hex, verifySecret } from './hashing';
import { principalOf, runUserCommand, type Identity } from './identity';
import { presentToken } from './present';
import { tokenRows } from './projection';
import { userById, type UsersState } from './state';
import type { UserStateCache } from './stateCache';

/** `mlt_<token id>_<secret>`: the id finds the token, the secret is checked against its scrypt hash. */
const TOKEN_PATTERN = /^mlt_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;

const MAX_VERIFIED_TOKENS = 1000;

/** A token that is not revoked or expired, and its user. */
const liveToken = (ctx: AppContext, users: UsersState, tokenId: string) => {
  const token = users.tokens.get(tokenId);
  if (!token) return undefined;
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= ctx.clock().getTime()) return undefined;
  const user = userById(users, token.userId);
  return user ? { token, user } : undefined;
};

const tokenIdentity = ({ token, user }: NonNullable<ReturnType<typeof liveToken>>): Identity => ({
  principal: principalOf(user, token.project),
  actor: { kind: 'token', id: token.tokenId },
  via: 'token',
});

/** Access tokens: made, revoked, listed, and the identity a bearer token carries. */
export const userTokens = (ctx: AppContext, states: UserStateCache) => {
  // A token's scrypt check costs ~50 ms: a token once verified is remembered (by its SHA-256) until
  // it is revoked or expires, which every request still checks against the log's state.
  const verifiedTokens = new BoundedMap<string, string>(MAX_VERIFIED_TOKENS);

  return {
    /** The identity a bearer token carries, or undefined (unknown, wrong secret, expired, revoked). */
    fromToken: async (bearer: string): Promise<Identity | undefined> => {
      const m = TOKEN_PATTERN.exec(bearer);
      if (!m) return undefined;
      const live = liveToken(ctx, await states.state(), m[1]!);
      if (!live) return undefined;
      const digest = sha256Hex(bearer);
      if (verifiedTokens.get(digest) !== live.token.tokenId) {
        if (!(await verifySecret(m[2]!, live.token.secretHash))) return undefined;
        verifiedTokens.set(digest, live.token.tokenId);
      }
      return tokenIdentity(live);
    },
    /** Whether a password field holds an access token (`mlt_…`) rather than a password. */
    looksLikeToken: (text: string) => TOKEN_PATTERN.test(text),
    /**
     * A token's identity by its id, its secret checked already (a wire connection that signed in
     * with it): undefined once it is revoked or expired, or its user is gone.
     */
    identityOfToken: async (tokenId: string): Promise<Identity | undefined> => {
      const live = liveToken(ctx, await states.state(), tokenId);
      return live ? tokenIdentity(live) : undefined;
    },

    /** A new token for a user: its clear text is in this answer only. */
    createToken: async (
      user: string,
      input: { name: string; project: string | null; expiresAt: Date | null },
    ) => {
      const tokenId = randomId(12);
      const secret = randomId(32);
      const outcome = await runUserCommand(ctx, {
        type: 'CreateToken',
        data: { user, tokenId, secretHash: await hashSecret(secret), ...input },
      });
      const created = outcome.events[0];
      return {
        id: tokenId,
        token: `mlt_${tokenId}_${secret}`,
        name: input.name,
        user,
        project: input.project,
        expires_at: input.expiresAt?.toISOString() ?? null,
        created_at: created?.meta.recordedAt ?? ctx.clock().toISOString(),
      };
    },
    /** `owner` null: any user's token (an admin). */
    revokeToken: async (tokenId: string, owner: string | null) => {
      await runUserCommand(ctx, { type: 'RevokeToken', data: { tokenId, owner } });
    },
    tokens: async (user: string | null) => {
      const users = await states.state();
      const id = user === null ? null : (users.users.get(nameKey(user))?.id ?? -1);
      return (await tokenRows(ctx.duck, id)).map(presentToken);
    },
  };
};
