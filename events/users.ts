import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const userResource: ResourceDeclaration = { kind: 'user', id: 'userId' };
const accessTokenResource: ResourceDeclaration = { kind: 'accessToken', id: 'tokenId' };
const sessionResource: ResourceDeclaration = { kind: 'session', id: 'sessionId' };

/**
 * Sign-in: users with a role, their personal access tokens, and sessions. Users and tokens live on
 * one stream (`users`: names are unique across it, and a token's user is checked on the same
 * state); each session is a stream of its own (`session-<id>`), so sign-ins never grow it.
 * Passwords and token secrets are never in the log: only their scrypt hashes
 * (`scrypt$N$r$p$salt$hash`, base64url); a session's secret only as its SHA-256 (256 random bits).
 */
export const ROLES = ['admin', 'editor', 'analyst', 'auditor'] as const;
export type Role = (typeof ROLES)[number];
const role = z.enum(ROLES);

export const UserCreated = defineEvent(
  'UserCreated',
  z.object({ name: z.string(), role, passwordHash: z.string(), createdAt: z.iso.datetime() }),
  { resource: userResource },
);
export const UserPasswordChanged = defineEvent(
  'UserPasswordChanged',
  z.object({
    userId: z.number().int(),
    name: z.string(),
    passwordHash: z.string(),
    changedAt: z.iso.datetime(),
  }),
  { resource: userResource },
);
export const UserRoleChanged = defineEvent(
  'UserRoleChanged',
  z.object({ userId: z.number().int(), name: z.string(), role, changedAt: z.iso.datetime() }),
  { resource: userResource },
);
export const UserDeleted = defineEvent(
  'UserDeleted',
  z.object({ userId: z.number().int(), name: z.string(), deletedAt: z.iso.datetime() }),
  { resource: userResource },
);
export const AccessTokenCreated = defineEvent(
  'AccessTokenCreated',
  z.object({
    /** The public part of the token (`mlt_<tokenId>_<secret>`): how it is found, never secret. */
    tokenId: z.string(),
    userId: z.number().int(),
    user: z.string(),
    name: z.string(),
    secretHash: z.string(),
    /** The only project it reaches (null: every project its user reaches). */
    project: z.string().nullable(),
    expiresAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  }),
  { resource: accessTokenResource },
);
export const AccessTokenRevoked = defineEvent(
  'AccessTokenRevoked',
  z.object({ tokenId: z.string(), userId: z.number().int(), revokedAt: z.iso.datetime() }),
  { resource: accessTokenResource },
);
export const SessionStarted = defineEvent(
  'SessionStarted',
  z.object({
    sessionId: z.string(),
    userId: z.number().int(),
    user: z.string(),
    /** SHA-256 (hex) of the cookie's secret part. */
    secretHash: z.string(),
    /** The client address that signed in. */
    address: z.string(),
    startedAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  }),
  { resource: sessionResource },
);
export const SessionEnded = defineEvent(
  'SessionEnded',
  z.object({ sessionId: z.string(), reason: z.enum(['logout', 'revoked']), endedAt: z.iso.datetime() }),
  { resource: sessionResource },
);

export type UserCreated = EventOf<typeof UserCreated>;
export type UserPasswordChanged = EventOf<typeof UserPasswordChanged>;
export type UserRoleChanged = EventOf<typeof UserRoleChanged>;
export type UserDeleted = EventOf<typeof UserDeleted>;
export type AccessTokenCreated = EventOf<typeof AccessTokenCreated>;
export type AccessTokenRevoked = EventOf<typeof AccessTokenRevoked>;
export type SessionStarted = EventOf<typeof SessionStarted>;
export type SessionEnded = EventOf<typeof SessionEnded>;
export type UserEvent =
  UserCreated | UserPasswordChanged | UserRoleChanged | UserDeleted | AccessTokenCreated | AccessTokenRevoked;
export type SessionEvent = SessionStarted | SessionEnded;
export const userContracts = [
  UserCreated,
  UserPasswordChanged,
  UserRoleChanged,
  UserDeleted,
  AccessTokenCreated,
  AccessTokenRevoked,
  SessionStarted,
  SessionEnded,
] as const;
