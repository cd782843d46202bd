import { z } from 'zod';
import { ROLES } from './state';

const role = z.enum(ROLES);
const userName = z.string().min(1).max(64);
const password = z.string().min(8, 'A password has at least 8 characters').max(1024);

export const loginBody = z.object({ username: z.unknown(), password: z.unknown() });
/** A new user: `name`, or `username` as `/api/login` (and MindsDB) calls it; one of them, or both alike. */
export const createUserBody = z
  .object({
    name: userName.optional().describe('The user name (or send it as username)'),
    username: userName.optional().describe('The user name, as POST /api/login takes it'),
    password,
    role,
  })
  .superRefine((b, ctx) => {
    if (b.name === undefined && b.username === undefined)
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'Send the user name as name (or username)' });
    else if (b.name !== undefined && b.username !== undefined && b.name !== b.username)
      ctx.addIssue({
        code: 'custom',
        path: ['username'],
        message: 'name and username differ: send one of them',
      });
  });
export const updateUserBody = z
  .object({ password: password.optional(), role: role.optional() })
  .refine((b) => b.password !== undefined || b.role !== undefined, 'Send password, role or both');
export const createTokenBody = z.object({
  name: z.string().min(1).max(200),
  project: z.string().min(1).max(200).nullable().optional().describe('The only project it reaches'),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  expires_in_days: z.number().int().min(1).max(3650).optional(),
});

export const userView = z.object({
  id: z.number().int(),
  name: z.string(),
  role: role,
  created_at: z.string().nullable(),
  password_changed_at: z.string().nullable(),
});
export const tokenView = z.object({
  id: z.string(),
  name: z.string(),
  user: z.string(),
  project: z.string().nullable(),
  expires_at: z.string().nullable(),
  created_at: z.string().nullable(),
});
export const createdTokenView = tokenView.extend({
  token: z.string().describe('The token itself: shown this once, stored only as an scrypt hash'),
});
export const meView = z.object({
  http_auth_enabled: z.boolean(),
  user: z.string().nullable(),
  role: role.nullable(),
  project: z.string().nullable(),
  via: z.enum(['session', 'token', 'none']),
});
export const nameParams = z.object({ name: z.string().min(1) });
export const tokenParams = z.object({ id: z.string().min(1) });
