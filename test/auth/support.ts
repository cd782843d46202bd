import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type MysqlServer } from '../../src/mysql';
import { sqlDoor } from '../../src/users/sqlDoors';
import { startTestApp, type StoreKind, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';

export const ADMIN = { name: 'root', password: 'root-password-1' };

/** An app with authentication on (AUTH_USERNAME/AUTH_PASSWORD make the admin). */
export const startAuthApp = (
  kind: StoreKind,
  env: Record<string, string> = {},
  logStream?: NodeJS.WritableStream,
) => startTestApp(kind, { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password, ...env }, { logStream });

/** Signs in; the session cookie (`name=value`) to send back. */
export const login = async (t: TestApp, name: string, password: string) => {
  const res = await t.http.post('/api/login').send({ username: name, password }).expect(200);
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0] ?? '';
  return cookie.split(';')[0]!;
};

/** A user of a role, made by the admin; their session cookie. */
export const userWithRole = async (t: TestApp, admin: string, name: string, role: string) => {
  const password = `${name}-password`;
  await t.http.post('/api/users').set('Cookie', admin).send({ name, password, role }).expect(201);
  return { name, password, cookie: await login(t, name, password) };
};

/** The MySQL protocol in front of the app, with the same users (as src/main.ts starts it). */
export const startMysqlDoor = async (t: TestApp): Promise<MysqlServer> => {
  const door = sqlDoor(t.running.services.users, t.running.sql, await t.running.services.users.enabled());
  return startMysqlServer({
    engine: door.engine,
    auth: door.auth,
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
  });
};

export const mysqlAs = (server: MysqlServer, user: string, password: string) =>
  mysql.createConnection({ host: '127.0.0.1', port: server.port, user, password });

export const sqlOver = async (t: TestApp, cookie: string, query: string) =>
  (await t.http.post('/api/sql/query').set('Cookie', cookie).send({ query }).expect(200)).body as {
    type: string;
    data?: unknown[][];
    column_names?: string[];
    error_code?: number;
    error_message?: string;
  };

/** A personal access token made by the signed-in user (a cookie), scoped to `project` (null: unscoped). */
export const projectToken = async (t: TestApp, cookie: string, project: string | null, name?: string) => {
  const res = await t.http
    .post('/api/tokens')
    .set('Cookie', cookie)
    .send({ name: name ?? `t_${Math.random().toString(36).slice(2, 8)}`, project })
    .expect(201);
  return (res.body as { token: string }).token;
};

/** Who a role matrix asks as: each role's user, and an admin's token scoped to project `pa`. */
export type Who = 'admin' | 'editor' | 'analyst' | 'auditor' | 'token(pa)';

/** A bearer token for each of `Who` (users named `<prefix>_<role>`), made by the signed-in `admin`. */
export const tokensByRole = async (
  t: TestApp,
  admin: string,
  prefix: string,
): Promise<Record<Who, string>> => {
  const tokens = {
    admin: await projectToken(t, admin, null),
    'token(pa)': await projectToken(t, admin, 'pa'),
  } as Record<Who, string>;
  for (const role of ['editor', 'analyst', 'auditor'] as const) {
    const u = await userWithRole(t, admin, `${prefix}_${role}`, role);
    tokens[role] = await projectToken(t, u.cookie, null);
  }
  return tokens;
};

/**
 * A role matrix's world: sign-in on, the provider stand-in answering text, the admin's session and a
 * bearer token for each of `Who` (users named `<prefix>_<role>`).
 */
export const startRoleWorld = async (kind: StoreKind, prefix: string) => {
  const t = await startAuthApp(kind);
  const fake = await startFakeOpenAi();
  fake.setFallback(fakeReply.text('Hello from the agent.'));
  const admin = await login(t, ADMIN.name, ADMIN.password);
  return { t, fake, admin, tokens: await tokensByRole(t, admin, prefix) };
};

/** The agent `helper` of `project`, on the provider stand-in, made by the signed-in `admin`. */
export const givenHelperAgent = (t: TestApp, admin: string, project: string, fake: FakeOpenAi) =>
  t.http
    .post(`/api/projects/${project}/agents`)
    .set('Cookie', admin)
    .send({
      agent: {
        name: 'helper',
        model: { model_name: 'gpt-test', provider: 'openai', api_key: 'sk-a', base_url: fake.baseUrl },
      },
    })
    .expect(201);
