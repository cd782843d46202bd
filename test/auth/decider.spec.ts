import type { UserCreated } from '../../events';
import { decideSession, decideUsers, type SessionCommand, type UserCommand } from '../../src/users/decider';
import { refusalOf } from '../../src/users/roles';
import { sessionAggregate, usersAggregate } from '../../src/users/state';
import { deciderSpec } from '../support/decider';

const now = new Date('2026-01-01T00:00:00.000Z');
const at = now.toISOString();
const metadata = { now };
const users = deciderSpec<ReturnType<typeof usersAggregate.initialState>, UserCommand>({
  ...usersAggregate,
  decide: decideUsers,
});
const sessions = deciderSpec<ReturnType<typeof sessionAggregate.initialState>, SessionCommand>({
  ...sessionAggregate,
  decide: decideSession,
});
const userCreated = (name: string, role: UserCreated['data']['role'] = 'admin'): UserCreated => ({
  type: 'UserCreated',
  data: { name, role, passwordHash: `scrypt$hash-of-${name}`, createdAt: at },
});

describe('users decider', () => {
  it('creates a user with a hashed password', () =>
    users
      .given([])
      .when({
        type: 'CreateUser',
        data: { name: 'ada', role: 'analyst', passwordHash: 'scrypt$h' },
        metadata,
      })
      .then([
        {
          type: 'UserCreated',
          data: { name: 'ada', role: 'analyst', passwordHash: 'scrypt$h', createdAt: at },
        },
      ]));

  it('refuses a name taken in any case, and names that are not plain', () => {
    users
      .given([userCreated('Ada')])
      .when({ type: 'CreateUser', data: { name: 'ada', role: 'editor', passwordHash: 'h' }, metadata })
      .thenThrows('Conflict', /already exists/);
    users
      .given([])
      .when({ type: 'CreateUser', data: { name: "x'; DROP", role: 'editor', passwordHash: 'h' }, metadata })
      .thenThrows('Invalid', /user name/);
  });

  it('keeps the last admin: neither deleted nor demoted', () => {
    users
      .given([userCreated('root')])
      .when({ type: 'DeleteUser', data: { name: 'root' }, metadata })
      .thenThrows('Conflict', /last admin/);
    users
      .given([userCreated('root')])
      .when({ type: 'ChangeRole', data: { name: 'root', role: 'auditor' }, metadata })
      .thenThrows('Conflict', /last admin/);
    users
      .given([userCreated('root'), userCreated('second')])
      .when({ type: 'DeleteUser', data: { name: 'root' }, metadata })
      .then([{ type: 'UserDeleted', data: { userId: 1, name: 'root', deletedAt: at } }]);
  });

  it('makes a token for a user, refusing an expiry in the past', () => {
    const data = { user: 'root', tokenId: 't1', name: 'ci', secretHash: 'scrypt$s', project: 'p' };
    users
      .given([userCreated('root')])
      .when({ type: 'CreateToken', data: { ...data, expiresAt: null }, metadata })
      .then([
        {
          type: 'AccessTokenCreated',
          data: {
            tokenId: 't1',
            userId: 1,
            user: 'root',
            name: 'ci',
            secretHash: 'scrypt$s',
            project: 'p',
            expiresAt: null,
            createdAt: at,
          },
        },
      ]);
    users
      .given([userCreated('root')])
      .when({ type: 'CreateToken', data: { ...data, expiresAt: new Date('2025-01-01') }, metadata })
      .thenThrows('Invalid', /past/);
  });

  it("revokes a token for its owner or an admin; another user's reads as unknown", () => {
    const given = users.given([
      userCreated('root'),
      userCreated('bob', 'editor'),
      {
        type: 'AccessTokenCreated',
        data: {
          tokenId: 't1',
          userId: 1,
          user: 'root',
          name: 'ci',
          secretHash: 'h',
          project: null,
          expiresAt: null,
          createdAt: at,
        },
      },
    ]);
    given
      .when({ type: 'RevokeToken', data: { tokenId: 't1', owner: 'bob' }, metadata })
      .thenThrows('NotFound');
    given
      .when({ type: 'RevokeToken', data: { tokenId: 't1', owner: null }, metadata })
      .then([{ type: 'AccessTokenRevoked', data: { tokenId: 't1', userId: 1, revokedAt: at } }]);
  });
});

describe('session decider', () => {
  const started = {
    type: 'SessionStarted' as const,
    data: {
      sessionId: 's',
      userId: 1,
      user: 'root',
      secretHash: 'x',
      address: '127.0.0.1',
      startedAt: at,
      expiresAt: at,
    },
  };
  it('ends a live session once; ending it again changes nothing', () => {
    sessions
      .given([started])
      .when({ type: 'EndSession', data: { reason: 'logout' }, metadata })
      .then([{ type: 'SessionEnded', data: { sessionId: 's', reason: 'logout', endedAt: at } }]);
    sessions
      .given([started, { type: 'SessionEnded', data: { sessionId: 's', reason: 'logout', endedAt: at } }])
      .when({ type: 'EndSession', data: { reason: 'logout' }, metadata })
      .then([]);
  });
});

describe('route rules by role', () => {
  const as = (role: 'admin' | 'editor' | 'analyst' | 'auditor', project: string | null = null) => ({
    user: 'u',
    role,
    project,
  });
  it.each([
    ['admin', 'DELETE', '/api/users/x', null],
    ['editor', 'GET', '/api/users', 'Managing users takes the admin role'],
    ['editor', 'DELETE', '/api/projects/p/skills/s', null],
    ['analyst', 'POST', '/api/projects/p/models/m/predict', null],
    ['analyst', 'POST', '/api/projects/p/agents/a/completions/stream', null],
    [
      'analyst',
      'PUT',
      '/api/projects/p/skills/s',
      'The analyst role reads and queries; changes take the editor role',
    ],
    ['auditor', 'GET', '/api/events', null],
    ['auditor', 'GET', '/api/projects', 'The auditor role reads the event log and audit routes only'],
    ['auditor', 'POST', '/api/tokens', null],
  ] as const)('%s %s %s', (role, method, path, refusal) =>
    expect(refusalOf(as(role), method, path)).toBe(refusal),
  );

  // No route answers a past state yet: `?as_of=` must not turn into a read of the current one.
  it('refuses an auditor the current resources', () => {
    expect(refusalOf(as('auditor'), 'GET', '/api/projects/p/skills')).toBe(
      'The auditor role reads the event log and audit routes only',
    );
    expect(refusalOf(as('auditor'), 'DELETE', '/api/projects/p/skills/s')).not.toBeNull();
  });

  it('holds a scoped token to its project', () => {
    expect(refusalOf(as('admin', 'p'), 'GET', '/api/projects/P/models')).toBeNull();
    expect(refusalOf(as('admin', 'p'), 'GET', '/api/projects/q/models')).toBe(
      'This token reaches only project p',
    );
    expect(refusalOf(as('admin', 'p'), 'POST', '/api/tokens')).toBe('This token reaches only project p');
  });
});
