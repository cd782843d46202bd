import type { Request } from 'express';
import { z } from 'zod';
import type { Api } from '../http/api';
import { problem } from '../http/api';
import { deleteResponses } from '../http/resourceRoutes';
import { forbidden, invalid, notFound } from '../shared/errors';
import { currentRequest } from '../shared/requestContext';
import { clearedSessionCookie, cookieOf, SESSION_COOKIE, sessionCookie } from './cookies';
import { identityOf } from './guard';
import {
  createdTokenView,
  createTokenBody,
  createUserBody,
  loginBody,
  meView,
  nameParams,
  tokenParams,
  tokenView,
  updateUserBody,
  userView,
} from './schemas';
import type { UsersService } from './service';

type CookiePolicy = { secure: 'auto' | boolean; sessionTtlMs: number };

const secureFor = (policy: CookiePolicy, req: Request) =>
  policy.secure === 'auto' ? req.secure : policy.secure;

/** The signed-in user (tokens and user management need one). */
const signedIn = () => {
  const principal = currentRequest()?.principal;
  if (!principal) throw invalid('Authentication is off: there is no signed-in user', 'Not signed in');
  return principal;
};

/** POST /api/login, /api/logout (as MindsDB), /api/me, users (admins) and access tokens. */
export const userRoutes = (api: Api, users: UsersService, cookies: CookiePolicy) =>
  tokenRoutes(userAdminRoutes(sessionRoutes(api, users, cookies), users), users);

/** Signing in and out, and who the caller is. */
const sessionRoutes = (api: Api, users: UsersService, cookies: CookiePolicy) =>
  api
    .add({
      method: 'post',
      path: '/api/login',
      tag: 'auth',
      summary: 'Sign in: sets an httpOnly, SameSite=Lax session cookie (as MindsDB answers: `{}`)',
      body: loginBody,
      responses: {
        200: { description: 'Signed in', schema: z.object({}) },
        400: problem('Error in username or password'),
        401: problem('Invalid username or password'),
        429: problem('Too many login attempts'),
      },
      handle: async ({ body, request }) => {
        if (typeof body.username !== 'string' || typeof body.password !== 'string' || !body.username)
          throw invalid('Error in username or password', 'Error in username or password');
        const session = await users.login(body.username, body.password, request.ip ?? '');
        const maxAge = Math.floor(cookies.sessionTtlMs / 1000);
        return {
          status: 200,
          body: {},
          headers: { 'Set-Cookie': sessionCookie(session.cookie, maxAge, secureFor(cookies, request)) },
        };
      },
    })
    .add({
      method: 'post',
      path: '/api/logout',
      tag: 'auth',
      summary: 'Sign out: the session ends (in the log) and the cookie is cleared',
      responses: { 200: { description: 'Signed out (empty body)' } },
      handle: async ({ request }) => {
        const cookie = cookieOf(request, SESSION_COOKIE);
        if (cookie) await users.logout(cookie);
        return {
          status: 200,
          headers: { 'Set-Cookie': clearedSessionCookie(secureFor(cookies, request)) },
        };
      },
    })
    .add({
      method: 'get',
      path: '/api/me',
      tag: 'auth',
      summary: 'Who the caller is: user, role, project scope, and how they signed in',
      responses: { 200: { description: 'The caller', schema: meView } },
      handle: async ({ request }) => {
        const identity = identityOf(request);
        return {
          status: 200,
          body: {
            http_auth_enabled: await users.enabled(),
            user: identity?.principal.user ?? null,
            role: identity?.principal.role ?? null,
            project: identity?.principal.project ?? null,
            via: identity?.via === 'token' ? 'token' : identity ? 'session' : 'none',
          },
        };
      },
    });

/** Users and their roles, kept by admins. */
const userAdminRoutes = (api: Api, users: UsersService) =>
  api
    .add({
      method: 'get',
      path: '/api/users',
      tag: 'auth',
      summary: 'Users and their roles (admins)',
      responses: { 200: { description: 'Users', schema: z.array(userView) } },
      handle: async () => ({ status: 200, body: await users.list() }),
    })
    .add({
      method: 'post',
      path: '/api/users',
      tag: 'auth',
      summary: 'Create a user (admins; with authentication off, the first admin turns it on)',
      body: createUserBody,
      responses: { 201: { description: 'Created', schema: userView }, 409: problem('User already exists') },
      handle: async ({ body: { name, username, password, role } }) => {
        const user = { name: (name ?? username)!, password, role };
        await users.create(user);
        return { status: 201, body: await users.get(user.name) };
      },
    })
    .add({
      method: 'put',
      path: '/api/users/:name',
      tag: 'auth',
      summary: "Change a user's password or role (admins; anyone their own password)",
      params: nameParams,
      body: updateUserBody,
      responses: { 200: { description: 'Updated', schema: userView }, 404: problem('User not found') },
      handle: async ({ params, body }) => {
        await users.update(params.name, body);
        const user = await users.get(params.name);
        if (!user) throw notFound(`User ${params.name} does not exist`, 'User not found');
        return { status: 200, body: user };
      },
    })
    .add({
      method: 'delete',
      path: '/api/users/:name',
      tag: 'auth',
      summary: 'Delete a user: their tokens and sessions stop working at once (admins)',
      params: nameParams,
      responses: { ...deleteResponses('User not found'), 409: problem('Last admin') },
      handle: async ({ params }) => {
        await users.remove(params.name);
        return { status: 204 };
      },
    });

/** Personal access tokens: the caller's own (an admin's: anyone's). */
const tokenRoutes = (api: Api, users: UsersService) =>
  api
    .add({
      method: 'get',
      path: '/api/tokens',
      tag: 'auth',
      summary: "The caller's personal access tokens (an admin: ?all=true for everyone's)",
      query: z.object({ all: z.enum(['true', 'false']).optional() }),
      responses: { 200: { description: 'Tokens (never their secrets)', schema: z.array(tokenView) } },
      handle: async ({ query }) => {
        const me = signedIn();
        const all = query.all === 'true' && me.role === 'admin';
        return { status: 200, body: await users.tokens(all ? null : me.user) };
      },
    })
    .add({
      method: 'post',
      path: '/api/tokens',
      tag: 'auth',
      summary: 'Create a personal access token (Authorization: Bearer …), shown once',
      body: createTokenBody,
      responses: { 201: { description: 'Created: `token` is shown only now', schema: createdTokenView } },
      handle: async ({ body }) => {
        const me = signedIn();
        if (me.project !== null) throw forbidden('A project-scoped token cannot make tokens');
        const expiresAt =
          body.expires_at != null
            ? new Date(body.expires_at)
            : body.expires_in_days !== undefined
              ? new Date(Date.now() + body.expires_in_days * 86_400_000)
              : null;
        const created = await users.createToken(me.user, {
          name: body.name,
          project: body.project ?? null,
          expiresAt,
        });
        return { status: 201, body: created, headers: { 'Cache-Control': 'no-store' } };
      },
    })
    .add({
      method: 'delete',
      path: '/api/tokens/:id',
      tag: 'auth',
      summary: 'Revoke a token: it stops working at once (your own; an admin any)',
      params: tokenParams,
      responses: { 204: { description: 'Revoked' }, 404: problem('Token not found') },
      handle: async ({ params }) => {
        const me = signedIn();
        await users.revokeToken(params.id, me.role === 'admin' ? null : me.user);
        return { status: 204 };
      },
    });
